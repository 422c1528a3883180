package index

import (
	"slices"
	"sort"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// ServedNamespace is what an index serves of one namespace: a walk's figures (the index's
// aggregate, a first build's walk, or on a cluster a walk of the masters that could not serve
// it from their index), and the index's own.
type ServedNamespace struct {
	walk.NamespaceResult
	// Indexed is true when an index read the namespace (on a cluster: some master's).
	Indexed bool
	// IndexAge is how long ago the index served was current: zero unless it resyncs.
	IndexAge time.Duration
	// LifecycleGap is true when an index that served the namespace did not count its lifecycle
	// for a while since the last scrape.
	LifecycleGap bool
}

// MergeServedNamespace adds b's figures (another master's) to a's; a says whether it is indexed.
func MergeServedNamespace(a, b ServedNamespace, k int) ServedNamespace {
	a.NamespaceResult = mergeNamespace(a.NamespaceResult, b.NamespaceResult, k)
	a.LifecycleGap = a.LifecycleGap || b.LifecycleGap
	a.IndexAge = max(a.IndexAge, b.IndexAge)
	return a
}

// mergeNamespace adds b's figures (another master's) to a's.
func mergeNamespace(a, b walk.NamespaceResult, k int) walk.NamespaceResult {
	a.Keys += b.Keys
	a.KeysWithoutTTL += b.KeysWithoutTTL
	a.FenceKeys += b.FenceKeys
	if b.HasTTL && (!a.HasTTL || b.MinTTL < a.MinTTL) {
		a.MinTTL, a.HasTTL = b.MinTTL, true
	}
	if b.HasIdle && (!a.HasIdle || b.MaxIdle > a.MaxIdle) {
		a.MaxIdle, a.HasIdle = b.MaxIdle, true
	}
	if b.HasHeld && (!a.HasHeld || b.MaxHeld > a.MaxHeld) {
		a.MaxHeld, a.HasHeld = b.MaxHeld, true
	}
	a.Stalest = mergeTop(a.Stalest, b.Stalest, k, walk.Staler)
	a.StalestNoTTL = mergeTop(a.StalestNoTTL, b.StalestNoTTL, k, walk.Staler)
	a.Soonest = mergeTop(a.Soonest, b.Soonest, k, walk.Sooner)
	a.LongestHeld = mergeTop(a.LongestHeld, b.LongestHeld, k, walk.LongerHeld)
	a.Truncated = a.Truncated || b.Truncated
	a.Complete = a.Complete && b.Complete
	if a.Err == nil {
		a.Err = b.Err
	}
	a.Duration = max(a.Duration, b.Duration)
	return a
}

// mergeTop keeps the k first of two lists by before. Each master's list holds its k first keys
// (a key lives on one master), so the k first of both are the cluster's k first.
func mergeTop(a, b []walk.KeyInfo, k int, before func(x, y walk.KeyInfo) bool) []walk.KeyInfo {
	if len(b) == 0 {
		return a
	}
	out := append(slices.Clone(a), b...)
	sort.SliceStable(out, func(i, j int) bool { return before(out[i], out[j]) })
	return out[:min(k, len(out))]
}
