package collectors

import (
	"iter"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// Result is what one scan saw. A Result returned before its scan ended (the caller's deadline
// came first) holds what had been seen by then, with Complete false where the scan was cut.
type Result struct {
	// Up is true when every Redis node scanned answered and no command failed.
	Up bool
	// Err is the first failure that made Up false; nil when Up is true.
	Err error
	// IdleTimeAvailable is false when a node refused OBJECT IDLETIME because its
	// maxmemory-policy is an LFU policy (idle time is not tracked then).
	IdleTimeAvailable bool
	// Namespaces holds one entry per configured namespace, in configuration order.
	Namespaces []NamespaceResult
	// ScanCalls is the number of SCAN commands the walk sent (all nodes).
	ScanCalls int64
	// KeysScanned is the number of keys SCAN returned (after the server-side MATCH and TYPE
	// filters), all nodes, duplicates included.
	KeysScanned int64
	// Keyspace is DBSIZE summed over the scanned nodes when the walk started.
	Keyspace int64
	// IndexResyncs counts the index's resyncs since start, by reason; nil without an index.
	IndexResyncs map[string]int64
	// IndexEntries is how many keys the index holds (locks and fence keys).
	IndexEntries int
	// IndexCorrections counts the index entries the backstop walk corrected since start, and
	// IndexBackstops the backstop walks it finished.
	IndexCorrections, IndexBackstops int64

	// lifecycle holds the lifecycle counters of the indexed namespaces followed at least once;
	// nil without an index.
	lifecycle *lifecycleReport
}

// NamespaceResult aggregates one namespace's keys.
type NamespaceResult struct {
	Namespace Namespace
	// Keys counts live keys examined (keys that vanished between SCAN and PTTL are not counted).
	Keys int64
	// KeysWithoutTTL counts keys with no expiry.
	KeysWithoutTTL int64
	// FenceKeys counts the lease library's companion keys (fence counters) under the pattern;
	// they are not locks and are not in Keys.
	FenceKeys int64
	// MinTTL is the smallest remaining TTL; valid only when HasTTL.
	MinTTL time.Duration
	// HasTTL is true when at least one key with an expiry was seen.
	HasTTL bool
	// MaxIdle is the largest OBJECT IDLETIME; valid only when HasIdle.
	MaxIdle time.Duration
	// HasIdle is true when at least one key's idle time was read.
	HasIdle bool
	// Stalest lists at most TopK keys, stalest first.
	Stalest []KeyInfo
	// StalestNoTTL lists at most TopK keys without expiry, stalest first.
	StalestNoTTL []KeyInfo
	// Soonest lists at most TopK keys with an expiry, shortest remaining TTL first; only with
	// Options.Soonest.
	Soonest []KeyInfo
	// LongestHeld lists at most TopK keys whose holder record carries the acquisition time,
	// longest held first; empty unless the namespace declares ExpectedMaxHold.
	LongestHeld []KeyInfo
	// MaxHeld is the longest hold among the namespace's keys; valid only when HasHeld.
	MaxHeld time.Duration
	// HasHeld is true when at least one key's hold age was read.
	HasHeld bool
	// Truncated is true when the MaxKeys cap stopped the scan.
	Truncated bool
	// Complete is true when the walk ran to its end on every node (or the namespace reached its
	// cap) without an error of the namespace before the deadline. When false, the counts are a
	// lower bound.
	Complete bool
	// Err is the first error confined to this namespace (a command on one of its keys failed);
	// nil when its commands succeeded. A deadline is not an error.
	Err error
	// Indexed is true when the figures come from the lock-key index (ModeAuto) rather than a
	// walk of the keyspace during the scrape.
	Indexed bool
	// IndexAge is zero when the index was current at the scrape (the change feed drained);
	// during a resync, the index served is the last complete one, and IndexAge is how long ago it
	// was last known current.
	IndexAge time.Duration
	// Mode is how the namespace was read: "index" or "walk"; ModeReason says why it was walked
	// ("" when indexed).
	Mode       string
	ModeReason string
	// Duration is how long the keyspace pass that served the namespace took, or ran until it was
	// cut: one walk serves every namespace, so namespaces share it.
	Duration time.Duration
	// lifecycleGap: an index that served the namespace did not count its lifecycle for a
	// while since the last scrape (a slot move, lifecycle_slot_moves.go), though it followed
	// every change of its keys.
	lifecycleGap bool
}

// knownNamespaces yields the namespaces whose key metrics are known: none when Redis could not
// be read, else those whose commands did not fail. The others' key metrics are left out: a
// missing series says "unknown" where a 0 would say "no locks" (lock_exporter_up and
// lock_exporter_scrape_success say why).
func (r *Result) knownNamespaces() iter.Seq[*NamespaceResult] {
	return func(yield func(*NamespaceResult) bool) {
		if !r.Up {
			return
		}
		for i := range r.Namespaces {
			if r.Namespaces[i].Err == nil && !yield(&r.Namespaces[i]) {
				return
			}
		}
	}
}

// NoTTL is KeyInfo.TTL for a key without expiry (PTTL -1).
const NoTTL time.Duration = -1

// KeyInfo describes one live lock key. It never carries the key's value (the owner token).
type KeyInfo struct {
	// Key is the raw key name, possibly binary.
	Key string
	// TTL is the remaining time to live, or NoTTL.
	TTL time.Duration
	// Idle is OBJECT IDLETIME (one-second resolution); zero when idle time is unavailable.
	Idle time.Duration
	// Label is KeyLabel of the whole key (set for the keys a Result lists).
	Label string
	// Cut is true when Key holds only the first 128 bytes of a longer key name.
	Cut bool
	// Holder is the value of the key's holder key ("{L}:holder" for lock key L, at most 1024 bytes),
	// read for the keys a complete Result lists; "" when the lock records none (taken without
	// Policy.RecordHolder, or by another library), when Cut, or when it could not be read.
	Holder string
	// Held is how long the lock has been held, by the Redis server's clock: its TIME when the
	// key was inspected less the acquisition time in the lock's holder record. Valid only when
	// HasHeld (a namespace with ExpectedMaxHold, a lock whose holder record carries the time).
	Held    time.Duration
	HasHeld bool
}

// publicKeys converts a top-K list of the engine into the API's type, once per scrape.
func publicKeys(keys []walk.KeyInfo) []KeyInfo {
	if keys == nil {
		return nil
	}
	out := make([]KeyInfo, len(keys))
	for i, k := range keys {
		out[i] = KeyInfo(k)
	}
	return out
}

// walkedCopy is the Result of a walk's result, whose final form is shared by every scrape that
// waited on its walk: each namespace of all (the Scanner's, found by name) labelled as walked,
// for the reason in why (by position in the walk).
func walkedCopy(shared *walk.Result, all []Namespace, why map[int]string) *Result {
	res := publicResult(shared, all)
	for i := range res.Namespaces {
		res.Namespaces[i].Mode = modeWalk
		res.Namespaces[i].ModeReason = why[i]
	}
	return res
}

// publicResult converts a walk's result into the API's, each namespace of all found by name:
// the one place where what a walk saw becomes a Result.
func publicResult(w *walk.Result, all []Namespace) *Result {
	res := &Result{
		Up:                w.Up,
		Err:               publicErr(w.Err),
		IdleTimeAvailable: w.IdleTimeAvailable,
		Namespaces:        make([]NamespaceResult, len(w.Namespaces)),
		ScanCalls:         w.ScanCalls,
		KeysScanned:       w.KeysScanned,
		Keyspace:          w.Keyspace,
	}
	for i, ns := range w.Namespaces {
		res.Namespaces[i] = publicNamespaceResult(ns, namespaceNamed(all, ns.Namespace.Name))
	}
	return res
}

func publicNamespaceResult(w walk.NamespaceResult, ns Namespace) NamespaceResult {
	return NamespaceResult{
		Namespace:      ns,
		Keys:           w.Keys,
		KeysWithoutTTL: w.KeysWithoutTTL,
		FenceKeys:      w.FenceKeys,
		MinTTL:         w.MinTTL,
		HasTTL:         w.HasTTL,
		MaxIdle:        w.MaxIdle,
		HasIdle:        w.HasIdle,
		Stalest:        publicKeys(w.Stalest),
		StalestNoTTL:   publicKeys(w.StalestNoTTL),
		Soonest:        publicKeys(w.Soonest),
		LongestHeld:    publicKeys(w.LongestHeld),
		MaxHeld:        w.MaxHeld,
		HasHeld:        w.HasHeld,
		Truncated:      w.Truncated,
		Complete:       w.Complete,
		Err:            w.Err,
		Duration:       w.Duration,
	}
}

// publicErr is a walk's or an index's error with the walk's sentinel errors, which both return
// unwrapped, replaced by the API's.
func publicErr(err error) error {
	switch err {
	case walk.ErrNoAnswer:
		return ErrNoAnswer
	case walk.ErrClosed:
		return ErrScannerClosed
	}
	return err
}

// namespaceNamed is the namespace of all named name (names are unique).
func namespaceNamed(all []Namespace, name string) Namespace {
	for _, ns := range all {
		if ns.Name == name {
			return ns
		}
	}
	return Namespace{Name: name}
}
