package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// budgetNamespaces are two indexed namespaces; a's lease fence keys ({a:N}:fence) count in a.
var budgetNamespaces = []Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}}

// budgetScrape scrapes s, fails if the index holds more than budget keys (the budget bounds the
// index at every scrape, not only at its build), and returns the result.
func budgetScrape(t *testing.T, s *Scanner, budget int) *Result {
	t.Helper()
	res := s.Scan(context.Background())
	if res.IndexEntries > budget {
		t.Fatalf("the index holds %d keys, past the budget of %d: %v", res.IndexEntries, budget, modes(res))
	}
	return res
}

// namespaceIs reports whether r was read as want says: walked for the key budget (a walk's
// exact count), or served from a current index.
func namespaceIs(r NamespaceResult, walked bool, keys, fences int64) bool {
	if r.Keys != keys || r.FenceKeys != fences || r.Err != nil {
		return false
	}
	if walked {
		return r.Mode == modeWalk && r.ModeReason == reasonKeyBudget && r.Complete
	}
	return r.Mode == modeIndex && r.Indexed && r.IndexAge == 0
}

// TestIndexKeyBudgetBoundsTheIndex: the key budget bounds what the index holds at every scrape,
// whether the keys were there at the build or arrived through the change feed after it, and for
// the namespaces together as for one alone: the largest namespace goes to the walk, with the
// reason key_budget, and the others stay indexed. The budget held only at the build, for each
// namespace alone, and not for fence keys: keys written after start were all indexed (budget
// 1000, 5000 keys written: lock_exporter_index_keys 5000, mode="index").
func TestIndexKeyBudgetBoundsTheIndex(t *testing.T) {
	const budget = 100
	type want struct {
		walked       bool
		keys, fences int64
	}
	for _, tc := range []struct {
		name          string
		before, after []keyBatch
		a, b          want
	}{
		{"one namespace fed past it", []keyBatch{{"b:%d", 10}}, []keyBatch{{"a:%d", 150}},
			want{true, 150, 0}, want{false, 10, 0}},
		{"two namespaces fed past it together", nil, []keyBatch{{"a:%d", 70}, {"b:%d", 50}},
			want{true, 70, 0}, want{false, 50, 0}},
		{"two namespaces past it together at the build", []keyBatch{{"a:%d", 40}, {"b:%d", 70}}, nil,
			want{false, 40, 0}, want{true, 70, 0}},
		{"fence keys past it at the build", []keyBatch{{"{a:%d}:fence", 150}, {"b:%d", 10}}, nil,
			want{true, 0, 150}, want{false, 10, 0}},
		{"fence keys fed past it", []keyBatch{{"b:%d", 10}}, []keyBatch{{"{a:%d}:fence", 150}},
			want{true, 0, 150}, want{false, 10, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client(t)
			writeKeys(t, c, tc.before...)
			s, err := NewScanner(c, Options{Namespaces: budgetNamespaces, Mode: ModeAuto, IndexKeyBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			waitFor(t, 20*time.Second, "the first build", func() bool {
				res := budgetScrape(t, s, budget)
				return res.Up && res.Namespaces[0].Mode != "" && res.Namespaces[0].ModeReason != reasonIndexUnavailable
			})
			writeKeys(t, c, tc.after...)
			var last *Result
			deadline := time.Now().Add(20 * time.Second)
			for {
				last = budgetScrape(t, s, budget)
				a, b := last.Namespaces[0], last.Namespaces[1]
				if last.Up && namespaceIs(a, tc.a.walked, tc.a.keys, tc.a.fences) && namespaceIs(b, tc.b.walked, tc.b.keys, tc.b.fences) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("want a %+v, b %+v; got a %d keys %d fences, b %d keys %d fences, index %d keys: %v",
						tc.a, tc.b, a.Keys, a.FenceKeys, b.Keys, b.FenceKeys, last.IndexEntries, modes(last))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestIndexKeyBudgetNamespaceComesBack: a namespace walked for the key budget comes back to the
// index once the scrape's walk reads it whole (not cut at --scan.max-keys) and it and the
// indexed namespaces together hold at most half the budget; above that it stays walked, so that
// a namespace near the budget does not go back and forth. Its return is a rebuild, counted as
// a resync with the reason key_budget. It stayed walked until a restart, even at 0 keys.
func TestIndexKeyBudgetNamespaceComesBack(t *testing.T) {
	const budget = 100
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	writeKeys(t, c, keyBatch{"a:%d", 150}, keyBatch{"b:%d", 10})
	s, err := NewScanner(c, Options{Namespaces: budgetNamespaces, Mode: ModeAuto, IndexKeyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitFor(t, 20*time.Second, "a walked for the budget", func() bool {
		res := budgetScrape(t, s, budget)
		return res.Up && namespaceIs(res.Namespaces[0], true, 150, 0)
	})

	deleteKeys := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := c.Del(ctx, fmt.Sprintf("a:%d", i)).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 60 + b's 10 is past half the budget: a stays walked, however many scrapes read it.
	deleteKeys(60, 150)
	for range 5 {
		res := budgetScrape(t, s, budget)
		if !res.Up || !namespaceIs(res.Namespaces[0], true, 60, 0) || res.IndexResyncs[index.ResyncKeyBudget] != 0 {
			t.Fatalf("a at 60 keys (b 10, budget %d): %v, %d keys, resyncs %v; want walked for the budget",
				budget, modes(res), res.Namespaces[0].Keys, res.IndexResyncs)
		}
	}
	// 30 + 10 is under half: the next scrape's walk brings it back.
	deleteKeys(30, 60)
	var last *Result
	waitFor(t, 20*time.Second, "a back in the index", func() bool {
		last = budgetScrape(t, s, budget)
		return last.Up && namespaceIs(last.Namespaces[0], false, 30, 0) && namespaceIs(last.Namespaces[1], false, 10, 0)
	})
	if got := last.IndexResyncs[index.ResyncKeyBudget]; got != 1 {
		t.Errorf("resyncs %v, want one for key_budget", last.IndexResyncs)
	}
	matchesFreshWalk(t, s, c, budgetNamespaces)
}

// TestClusterIndexKeyBudgetIsTotal: on a cluster the budget bounds every master's index
// together, as the exporter's memory is one: a namespace whose keys spread over three masters,
// under the budget on each, was indexed past it in total.
func TestClusterIndexKeyBudgetIsTotal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	const budget = 100
	cluster := redistest.StartCluster(t, 3, 0)
	cc := clusterClient(t, cluster)
	writeKeys(t, cc, keyBatch{"a:%d", 150}, keyBatch{"b:%d", 10})
	s, err := NewScanner(cc, Options{Namespaces: budgetNamespaces, Mode: ModeAuto, IndexKeyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitFor(t, 30*time.Second, "a walked for the budget, b indexed", func() bool {
		res := budgetScrape(t, s, budget)
		return res.Up && namespaceIs(res.Namespaces[0], true, 150, 0) && namespaceIs(res.Namespaces[1], false, 10, 0)
	})
}
