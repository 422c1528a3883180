package clients

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// outcome is one recorded step of a truth scenario.
type outcome struct {
	holder string
	result Result
}

func TestTruthOrdersLifecycleEvents(t *testing.T) {
	const key = "k"
	tests := []struct {
		name    string
		steps   []outcome
		events  []string
		counts  Counts
		problem string // a substring of Err, or "" for none
	}{{
		name:   "acquire, renew, release",
		steps:  []outcome{{"A", Acquired}, {"A", Extended}, {"A", Released}},
		events: []string{"acquired A", "renewed A", "released A"},
		counts: Counts{Acquired: 1, Renewed: 1, Released: 1},
	}, {
		name:   "busy and failed steps are no events",
		steps:  []outcome{{"A", Acquired}, {"B", Busy}, {"A", Failed}, {"A", Released}},
		events: []string{"acquired A", "released A"},
		counts: Counts{Acquired: 1, Released: 1},
	}, {
		name:   "a lapse reported after the takeover stands before it",
		steps:  []outcome{{"A", Acquired}, {"B", Acquired}, {"A", NotOwned}, {"B", Released}},
		events: []string{"acquired A", "lapsed A", "acquired B", "taken_over B", "released B"},
		counts: Counts{Acquired: 2, Released: 1, Lapsed: 1, TakenOver: 1},
	}, {
		name:   "a chain of lapses reported late, in reverse",
		steps:  []outcome{{"A", Acquired}, {"B", Acquired}, {"C", Acquired}, {"B", NotOwned}, {"A", NotOwned}},
		events: []string{"acquired A", "lapsed A", "acquired B", "taken_over B", "lapsed B", "acquired C", "taken_over C"},
		counts: Counts{Acquired: 3, Lapsed: 2, TakenOver: 2},
	}, {
		name:   "a lapse reported before anyone acquires, then an acquisition",
		steps:  []outcome{{"A", Acquired}, {"A", NotOwned}, {"A", NotOwned}, {"B", Acquired}},
		events: []string{"acquired A", "lapsed A", "acquired B", "taken_over B"},
		counts: Counts{Acquired: 2, Lapsed: 1, TakenOver: 1},
	}, {
		name:   "Redisson re-entry and partial unlock are renewals",
		steps:  []outcome{{"A", Acquired}, {"A", Reentered}, {"A", Decremented}, {"A", Released}},
		events: []string{"acquired A", "renewed A", "renewed A", "released A"},
		counts: Counts{Acquired: 1, Renewed: 2, Released: 1},
	}, {
		name:   "a release after the client learnt of its lapse is no event",
		steps:  []outcome{{"A", Acquired}, {"B", Acquired}, {"A", NotOwned}, {"A", Released}},
		events: []string{"acquired A", "lapsed A", "acquired B", "taken_over B"},
		counts: Counts{Acquired: 2, Lapsed: 1, TakenOver: 1},
	}, {
		name:    "a release that succeeds after a takeover is a contradiction",
		steps:   []outcome{{"A", Acquired}, {"B", Acquired}, {"A", Released}},
		events:  []string{"acquired A", "acquired B"},
		counts:  Counts{Acquired: 2},
		problem: "A's release succeeded after B acquired the key: the client did not notice its lapse",
	}, {
		name:    "a lapse never reported",
		steps:   []outcome{{"A", Acquired}, {"B", Acquired}, {"B", Released}},
		events:  []string{"acquired A", "acquired B", "released B"},
		counts:  Counts{Acquired: 2, Released: 1},
		problem: "A's hold ended before B acquired, and A has not reported it",
	}, {
		name:    "a renewal after a takeover is a contradiction",
		steps:   []outcome{{"A", Acquired}, {"B", Acquired}, {"A", Extended}, {"A", NotOwned}},
		events:  []string{"acquired A", "lapsed A", "acquired B", "taken_over B"},
		counts:  Counts{Acquired: 2, Lapsed: 1, TakenOver: 1},
		problem: "A reported extended after B acquired the key",
	}, {
		name:    "a release without an acquisition",
		steps:   []outcome{{"A", Released}},
		problem: "A released without acquiring",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			truth := NewTruth()
			for _, s := range tt.steps {
				truth.Record(s.holder, key, Outcome{Result: s.result})
			}
			var events []string
			for _, e := range truth.Events(key) {
				events = append(events, e.String())
			}
			if !slices.Equal(events, tt.events) {
				t.Errorf("events:\n got %q\nwant %q", events, tt.events)
			}
			if got := truth.Counts(key); got != tt.counts {
				t.Errorf("counts = %+v, want %+v", got, tt.counts)
			}
			err := truth.Err()
			switch {
			case tt.problem == "" && err != nil:
				t.Errorf("Err = %v, want nil", err)
			case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
				t.Errorf("Err = %v, want one containing %q", err, tt.problem)
			case err != nil && !errors.Is(err, ErrInconsistent):
				t.Errorf("Err = %v, want it to wrap ErrInconsistent", err)
			}
		})
	}
}

func TestTruthTotalsKeysSeparately(t *testing.T) {
	truth := NewTruth()
	truth.Record("A", "k1", Outcome{Result: Acquired})
	truth.Record("B", "k2", Outcome{Result: Acquired})
	truth.Record("A", "k1", Outcome{Result: Released})
	// B's acquisition of k2 neither supersedes A's hold of k1 nor counts on it.
	if got, want := truth.Keys(), []string{"k1", "k2"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %q, want %q", got, want)
	}
	if got, want := truth.Total(), (Counts{Acquired: 2, Released: 1}); got != want {
		t.Errorf("Total = %+v, want %+v", got, want)
	}
	if err := truth.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
}
