package index

import "sync/atomic"

// scrapeServer is the part of an Node that a scrape reads beside the index's aggregates
// and hold ages: the index's figures a Result carries (Counts), and whether the server tracks
// idle time.
//
// Locks: entries, corrections and backstops are guarded by the node's mu; noIdle is atomic,
// shared with the inspectors of the node's re-reads.
type scrapeServer struct {
	// noIdle is set once the server refused OBJECT IDLETIME (an LFU maxmemory-policy); each
	// scrape clears it, since the policy is a runtime setting.
	noIdle atomic.Bool

	entries int // keys in the index after the last re-read
	// The backstop walk's counts: corrections it made, and walks it finished.
	corrections, backstops int64
}
