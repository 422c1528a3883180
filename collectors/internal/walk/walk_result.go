package walk

import (
	"log/slog"
	"time"
)

// Options is what a walk reads of the Scanner's Options (walkOptionsOf).
type Options struct {
	// Namespaces are the namespaces walked, in the order of the walk's results.
	Namespaces []Namespace
	// BatchSize is the SCAN COUNT hint and the pipeline size; MaxKeys caps the keys inspected
	// per namespace; TopK is the length of each top-K list.
	BatchSize, MaxKeys, TopK int
	// Timeout is the ceiling of one walk; a caller's earlier deadline wins.
	Timeout time.Duration
	// FullKeys keeps whole key names in the top-K lists; Soonest keeps the soonest-to-expire
	// list too.
	FullKeys, Soonest bool
	// Logger receives what the walk cannot report in its result (holder keys it could not read).
	Logger *slog.Logger
	// Report, when set, receives the final result of each walk, once: its owner logs it. An
	// owner that logs the scrape's merged result leaves it nil.
	Report func(*Result)
}

// Result is what one walk saw, per namespace in walkOptions order; collectors turns it
// into a Result (publicResult). A walkResult returned before its walk ended holds what had been
// seen by then, with Complete false where the walk was cut.
type Result struct {
	// Up is true when every node walked answered and no command failed; Err is the first
	// failure that made Up false.
	Up  bool
	Err error
	// IdleTimeAvailable is false when a node refused OBJECT IDLETIME (an LFU maxmemory-policy).
	IdleTimeAvailable bool
	Namespaces        []NamespaceResult
	// ScanCalls and KeysScanned count the SCAN commands sent and the keys they returned, and
	// Keyspace is DBSIZE summed over the nodes when the walk started.
	ScanCalls, KeysScanned, Keyspace int64
}

// NamespaceResult aggregates one namespace's keys in a walk: the fields of NamespaceResult
// a walk fills, with its top-K lists in the walk's key type.
type NamespaceResult struct {
	Namespace                       Namespace
	Keys, KeysWithoutTTL, FenceKeys int64
	MinTTL, MaxIdle, MaxHeld        time.Duration
	HasTTL, HasIdle, HasHeld        bool
	Stalest, StalestNoTTL           []KeyInfo
	Soonest, LongestHeld            []KeyInfo
	Truncated, Complete             bool
	Err                             error
	Duration                        time.Duration
}
