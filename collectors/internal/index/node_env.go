package index

import (
	"context"
	"log/slog"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// nodeWalker walks one node's keyspace in a walk: the keyspace walk by which an index node
// builds its index and runs its backstop walk.
type nodeWalker interface {
	WalkNode(f *walk.Run, c walk.NodeClient)
}

// Options is what an index node reads of Options, built once by indexOptionsOf, so that
// the node and its parts read the namespaces as the walk describes them and no public type.
type Options struct {
	// Namespaces are the indexed namespaces; bit b of a mask is Namespaces[b].
	Namespaces []walk.Namespace
	// Walk is the walk of a build and of a backstop: the indexed namespaces, each read up to the
	// key budget. Its TopK, FullKeys, BatchSize and Timeout are the scrape's too.
	Walk walk.Options
	// Scrape is the walk of a master a cluster's scrape reads instead of its index: the indexed
	// namespaces (the walker takes those of its mask), each read up to Options.MaxKeys.
	Scrape walk.Options
	// KeyBudget is Options.IndexKeyBudget.
	KeyBudget int
	// BackstopKeysPerSecond paces the backstop walk (negative: none); BackstopEvery spaces them.
	BackstopKeysPerSecond int
	BackstopEvery         time.Duration
	// Feed is the change feed asked for (Options.Feed).
	Feed FeedKind
	// MoveWaitMax, OnEvents and RecordHoldAgesOnly are Options' unexported settings.
	MoveWaitMax        time.Duration
	OnEvents           EventsFunc
	RecordHoldAgesOnly bool
	Logger             *slog.Logger
}

// Env is what an Node is given by the Scanner that starts it: the index's options,
// the key budget its index shares with the other masters' indexes, the clock of the replies its
// walks read, the walk itself, the context that ends when the Scanner closes, and the lock
// lifecycles its re-reads count.
//
// Locks: none; set when the node is made and never written after (budget and replies guard
// themselves).
type Env struct {
	Opts    Options
	Budget  *KeyBudget
	Replies *walk.ReplyClock
	Walker  nodeWalker
	Base    context.Context
	Life    *lifecycle.Tracker // the indexed namespaces' lock lifecycles, shared by a cluster's masters
}
