package collectors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/redis/go-redis/v9"
)

// indexed starts a Scanner in ModeAuto and waits for its index to be current. Its hold ages
// come from holder records alone, as a walk's, which the tests compare it with.
func indexed(t *testing.T, c redis.UniversalClient, namespaces []Namespace) *Scanner {
	t.Helper()
	s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeAuto, recordHoldAgesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	return s
}

// waitCurrent scrapes until every indexed namespace is served from a current index, and returns
// that scrape's Result.
func waitCurrent(t *testing.T, s *Scanner) *Result {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := s.Scan(context.Background())
		if res.Up && indexCurrent(s, res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("index not current after 20s: up=%v err=%v %+v", res.Up, res.Err, modes(res))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func indexCurrent(s *Scanner, res *Result) bool {
	for i, ns := range res.Namespaces {
		if _, walked := s.walkWhy[i]; walked {
			continue
		}
		// On a cluster, a namespace some masters serve from their index while others are
		// walked (a resync) is Indexed with mode walk: not current yet.
		if !ns.Indexed || ns.IndexAge != 0 || ns.Mode != modeIndex {
			return false
		}
	}
	return true
}

func modes(res *Result) []string {
	var out []string
	for _, ns := range res.Namespaces {
		out = append(out, fmt.Sprintf("%s=%s/%s indexed=%v age=%s", ns.Namespace.Name, ns.Mode, ns.ModeReason, ns.Indexed, ns.IndexAge))
	}
	return out
}

// freshWalk is what a walk of the keyspace sees now.
func freshWalk(t *testing.T, c redis.UniversalClient, namespaces []Namespace) *Result {
	t.Helper()
	s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeWalk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := s.Scan(context.Background())
	if !res.Up {
		t.Fatalf("walk: %v", res.Err)
	}
	return res
}

// matchesFreshWalk scrapes s once its index is current and reports every difference from a
// walk of c read right after, allowing for the time between the two.
func matchesFreshWalk(t *testing.T, s *Scanner, c redis.UniversalClient, namespaces []Namespace) {
	t.Helper()
	start := time.Now()
	res := waitCurrent(t, s)
	for _, d := range differences(res, freshWalk(t, c, namespaces), time.Since(start)+5*time.Millisecond) {
		t.Error(d)
	}
}

// differences lists every exported figure of got (the index) that a walk (want) read
// differently: counts exactly; the minimum TTL to within slack (the walk ran after the index's
// scrape); idle times (the longest, and the top-K by idle time, ties allowed) to within OBJECT
// IDLETIME's one-second resolution plus slack, since the walk reads them later, by seconds on a
// busy machine; holders of the keys both list; and hold ages (the longest, and the top-K by hold
// age) to within slack: the walk reads the server's clock later, so its ages are the larger.
func differences(got, want *Result, slack time.Duration) []string {
	var diffs []string
	for i := range want.Namespaces {
		g, w := got.Namespaces[i], want.Namespaces[i]
		name := w.Namespace.Name
		add := func(format string, args ...any) { diffs = append(diffs, name+": "+fmt.Sprintf(format, args...)) }
		if g.Keys != w.Keys || g.KeysWithoutTTL != w.KeysWithoutTTL || g.FenceKeys != w.FenceKeys {
			add("keys/noTTL/fence %d/%d/%d, walk %d/%d/%d", g.Keys, g.KeysWithoutTTL, g.FenceKeys, w.Keys, w.KeysWithoutTTL, w.FenceKeys)
		}
		if g.HasTTL != w.HasTTL || (g.HasTTL && (w.MinTTL > g.MinTTL+2*time.Millisecond || g.MinTTL-w.MinTTL > slack)) {
			add("min TTL %v (%v), walk %v (%v)", g.MinTTL, g.HasTTL, w.MinTTL, w.HasTTL)
		}
		if g.HasIdle != w.HasIdle || (g.HasIdle && !idleWithin(g.MaxIdle, w.MaxIdle, slack)) {
			add("max idle %v, walk %v", g.MaxIdle, w.MaxIdle)
		}
		for _, l := range []struct {
			name string
			g, w []KeyInfo
		}{{"stalest", g.Stalest, w.Stalest}, {"stalest without TTL", g.StalestNoTTL, w.StalestNoTTL}} {
			if d := topDifference(l.g, l.w, slack); d != "" {
				add("%s: %s", l.name, d)
			}
		}
		if g.HasHeld != w.HasHeld || (g.HasHeld && !heldWithin(g.MaxHeld, w.MaxHeld, slack)) {
			add("max held %v (%v), walk %v (%v)", g.MaxHeld, g.HasHeld, w.MaxHeld, w.HasHeld)
		}
		if d := heldTopDifference(g.LongestHeld, w.LongestHeld, slack); d != "" {
			add("longest held: %s", d)
		}
	}
	return diffs
}

// idleWithin reports whether an idle time the walk read (walk) agrees with the index's (got):
// OBJECT IDLETIME counts whole seconds, and the walk reads it later, by at most slack.
func idleWithin(got, walk, slack time.Duration) bool {
	return walk >= got-time.Second && walk-got <= slack+time.Second
}

func topDifference(got, want []KeyInfo, slack time.Duration) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d keys, walk %d: %v vs %v", len(got), len(want), keyNames(got), keyNames(want))
	}
	if len(want) == 0 {
		return ""
	}
	kth := want[len(want)-1].Idle
	byKey := map[string]KeyInfo{}
	for _, k := range want {
		byKey[k.Key] = k
	}
	for j, k := range got {
		if !idleWithin(k.Idle, want[j].Idle, slack) {
			return fmt.Sprintf("rank %d idle %v, walk %v", j, k.Idle, want[j].Idle)
		}
		w, listed := byKey[k.Key]
		switch {
		case !listed && k.Idle > kth+time.Second:
			return fmt.Sprintf("%q (idle %v) not in the walk's list %v", k.Key, k.Idle, keyNames(want))
		case listed && k.Holder != w.Holder:
			return fmt.Sprintf("%q holder %q, walk %q", k.Key, k.Holder, w.Holder)
		}
	}
	return ""
}

// heldWithin reports whether a hold age the walk read (walk) agrees with the index's (got): the
// walk's clock reading is the later one, by at most slack; the index ages whole milliseconds.
func heldWithin(got, walk, slack time.Duration) bool {
	return walk >= got-time.Millisecond && walk-got <= slack+time.Millisecond
}

// heldTopDifference compares the top-K lists by hold age: rank by rank within slack, and a key
// only the index lists must tie, within slack, with the walk's last.
func heldTopDifference(got, want []KeyInfo, slack time.Duration) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d keys, walk %d: %v vs %v", len(got), len(want), heldNames(got), heldNames(want))
	}
	listed := map[string]bool{}
	for _, k := range want {
		listed[k.Key] = true
	}
	for j, k := range got {
		if !k.HasHeld || !heldWithin(k.Held, want[j].Held, slack) {
			return fmt.Sprintf("rank %d %q held %v (%v), walk %q %v", j, k.Key, k.Held, k.HasHeld, want[j].Key, want[j].Held)
		}
		if !listed[k.Key] && !heldWithin(k.Held, want[len(want)-1].Held, slack) {
			return fmt.Sprintf("%q (held %v) not in the walk's list %v", k.Key, k.Held, heldNames(want))
		}
	}
	return ""
}

func heldNames(ks []KeyInfo) string {
	var out []string
	for _, k := range ks {
		out = append(out, fmt.Sprintf("%s@%v", k.Key, k.Held))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func keyNames(ks []KeyInfo) string {
	var out []string
	for _, k := range ks {
		out = append(out, fmt.Sprintf("%s@%v", k.Key, k.Idle))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// compareNow scrapes the index (current) and then walks, and fails on any difference.
func compareNow(t *testing.T, s *Scanner, c redis.UniversalClient, step string) int {
	t.Helper()
	start := time.Now()
	got := waitCurrent(t, s)
	want := freshWalk(t, c, s.opts.Namespaces)
	diffs := differences(got, want, time.Since(start)+5*time.Millisecond)
	for _, d := range diffs {
		t.Errorf("after %s: %s", step, d)
	}
	return len(diffs)
}

// keyBatch is n keys named by format (one %d, numbered from 0) written at once: locks with a
// TTL, or fence keys (no TTL) when the format names one.
type keyBatch struct {
	format string
	n      int
}

func writeKeys(t *testing.T, c redis.UniversalClient, batches ...keyBatch) {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	for _, b := range batches {
		for i := range b.n {
			key := fmt.Sprintf(b.format, i)
			ttl := time.Hour
			if lockkeys.KindOf(key) == lockkeys.FenceCompanion {
				ttl = 0
			}
			pipe.Set(ctx, key, "1", ttl)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}
