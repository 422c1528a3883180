package index

import (
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// buildState is the part of an Node that builds the index and resyncs it: whether a
// complete index exists and follows the feed, why it does not, and how builds go. The feed loop
// (run, build) writes most of it; scrapes read it to decide whether the index may serve.
//
// Locks: tried is a channel, closed once; every other field is guarded by the node's mu.
type buildState struct {
	// tried is closed when the first build attempt ended (built, refused or failed): a scrape
	// at start waits for it rather than walk beside a build that takes milliseconds.
	tried chan struct{}

	absolute  bool      // the server has PEXPIRETIME
	current   bool      // idx follows the feed; false while a resync runs
	currentAt time.Time // when idx was last known current
	lost      string    // a resync reason a scrape found, for the feed loop
	resyncs   map[string]int64
	refused   error
	returning uint64    // namespaces back under the key budget that no build has read yet: walked
	failing   bool      // the last build failed: scrapes walk until one succeeds
	building  *walk.Run // the first build's walk while it runs: a scrape meanwhile shares it
	built     bool      // a complete index exists
	// buildStart is when the build under way began (zero between builds), buildTook how long
	// the last complete one took: a cluster scrape judges by them whether to await a resync.
	buildStart time.Time
	buildTook  time.Duration
}
