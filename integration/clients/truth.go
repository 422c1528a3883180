package clients

import (
	"errors"
	"fmt"
	"sync"
)

// EventKind is one kind of lifecycle event in the truth.
type EventKind string

// The lifecycle events, named as the exporter's lifecycle counters count them.
const (
	EventAcquired EventKind = "acquired"
	// EventRenewed is a held lock's expiry moved later by its holder: an extend, a redis-py
	// reacquire, a Redisson re-entry or partial unlock.
	EventRenewed  EventKind = "renewed"
	EventReleased EventKind = "released"
	// EventLapsed is a hold that ended without its holder: the client said its lock is not its
	// own any more. It stands where the hold ended, before the next holder's acquisition.
	EventLapsed EventKind = "lapsed"
	// EventTakenOver is an acquisition of a key whose previous hold lapsed.
	EventTakenOver EventKind = "taken_over"
)

// Event is one lifecycle event of a key.
type Event struct {
	Kind   EventKind
	Holder string
}

func (e Event) String() string { return string(e.Kind) + " " + e.Holder }

// Counts are a key's events by kind: what the exporter's lifecycle counters should equal.
type Counts struct {
	Acquired, Renewed, Released, Lapsed, TakenOver int
}

// Add returns the sum of c and o.
func (c Counts) Add(o Counts) Counts {
	return Counts{c.Acquired + o.Acquired, c.Renewed + o.Renewed, c.Released + o.Released,
		c.Lapsed + o.Lapsed, c.TakenOver + o.TakenOver}
}

type holdEnd int

const (
	holdOpen holdEnd = iota
	holdReleased
	holdLapsed
)

// hold is one holder's tenure of a key. Locks are exclusive, so a key's holds follow each
// other: a hold that is still open when another holder acquires has ended (superseded), and
// waits for its holder to say how.
type hold struct {
	holder     string
	renewals   int
	end        holdEnd
	superseded string // the holder who acquired while this hold was open
}

// Truth is the lifecycle of each key as the clients themselves reported it: the holds in the
// order they happened, each acquired, renewed, and ended by a release or a lapse.
type Truth struct {
	mu       sync.Mutex
	keys     []string
	holds    map[string][]*hold
	problems []error
}

// ErrInconsistent is wrapped by each problem Truth.Err reports: an outcome that contradicts the
// others (a release that succeeded after another holder acquired) or a hold that ended unreported.
var ErrInconsistent = errors.New("truth is inconsistent")

// NewTruth returns an empty Truth.
func NewTruth() *Truth { return &Truth{holds: map[string][]*hold{}} }

// Record folds one step's outcome into the truth. key is the Redis key (RedisKey), holder a
// name unique among the clients that share the keys. Outcomes that change nothing in Redis
// (busy, failed, unsupported) are not events.
func (t *Truth) Record(holder, key string, out Outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch out.Result {
	case Acquired:
		t.acquired(holder, key)
	case Extended, Reentered, Decremented:
		t.renewed(holder, key, out.Result)
	case Released:
		t.released(holder, key)
	case NotOwned:
		t.lapsed(holder, key)
	}
}

func (t *Truth) problem(format string, args ...any) {
	t.problems = append(t.problems, fmt.Errorf("%w: "+format, append([]any{ErrInconsistent}, args...)...))
}

func (t *Truth) acquired(holder, key string) {
	holds, seen := t.holds[key]
	if !seen {
		t.keys = append(t.keys, key)
	}
	if n := len(holds); n > 0 && holds[n-1].end == holdOpen && holds[n-1].superseded == "" {
		holds[n-1].superseded = holder
		if holds[n-1].holder == holder {
			t.problem("key %s: %s acquired it again while its own hold was open", key, holder)
		}
	}
	t.holds[key] = append(holds, &hold{holder: holder})
}

// latest is the holder's most recent hold of the key.
func (t *Truth) latest(holder, key string) *hold {
	holds := t.holds[key]
	for i := len(holds) - 1; i >= 0; i-- {
		if holds[i].holder == holder {
			return holds[i]
		}
	}
	return nil
}

func (t *Truth) renewed(holder, key string, how Result) {
	h := t.latest(holder, key)
	switch {
	case h == nil || h.end != holdOpen:
		t.problem("key %s: %s reported %s without holding it", key, holder, how)
	case h.superseded != "":
		t.problem("key %s: %s reported %s after %s acquired the key", key, holder, how, h.superseded)
	default:
		h.renewals++
	}
}

func (t *Truth) released(holder, key string) {
	h := t.latest(holder, key)
	switch {
	case h == nil:
		t.problem("key %s: %s released without acquiring", key, holder)
	case h.end != holdOpen:
		// A release of a lock its client already knew it had lost or released: nothing happens.
	case h.superseded != "":
		t.problem("key %s: %s's release succeeded after %s acquired the key: the client did not notice its lapse", key, holder, h.superseded)
	default:
		h.end = holdReleased
	}
}

func (t *Truth) lapsed(holder, key string) {
	h := t.latest(holder, key)
	switch {
	case h == nil:
		t.problem("key %s: %s reported not owned without acquiring", key, holder)
	case h.end == holdOpen:
		h.end = holdLapsed
	}
}

// Keys returns the keys recorded, in the order they were first acquired.
func (t *Truth) Keys() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.keys...)
}

// Events returns the key's lifecycle in order.
func (t *Truth) Events(key string) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var events []Event
	holds := t.holds[key]
	for i, h := range holds {
		events = append(events, Event{EventAcquired, h.holder})
		if i > 0 && holds[i-1].end == holdLapsed {
			events = append(events, Event{EventTakenOver, h.holder})
		}
		for range h.renewals {
			events = append(events, Event{EventRenewed, h.holder})
		}
		switch h.end {
		case holdReleased:
			events = append(events, Event{EventReleased, h.holder})
		case holdLapsed:
			events = append(events, Event{EventLapsed, h.holder})
		}
	}
	return events
}

// Counts returns the key's events by kind.
func (t *Truth) Counts(key string) Counts {
	var c Counts
	for _, e := range t.Events(key) {
		switch e.Kind {
		case EventAcquired:
			c.Acquired++
		case EventRenewed:
			c.Renewed++
		case EventReleased:
			c.Released++
		case EventLapsed:
			c.Lapsed++
		case EventTakenOver:
			c.TakenOver++
		}
	}
	return c
}

// Total returns the counts of every key together.
func (t *Truth) Total() Counts {
	var total Counts
	for _, key := range t.Keys() {
		total = total.Add(t.Counts(key))
	}
	return total
}

// Err reports what keeps the truth from being exact: outcomes that contradicted each other, and
// holds that another holder's acquisition shows ended while their own client has not said so
// (drive its release or extend to learn how). Each wraps ErrInconsistent.
func (t *Truth) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	errs := append([]error(nil), t.problems...)
	for _, key := range t.keys {
		for _, h := range t.holds[key] {
			if h.end == holdOpen && h.superseded != "" {
				errs = append(errs, fmt.Errorf("%w: key %s: %s's hold ended before %s acquired, and %s has not reported it",
					ErrInconsistent, key, h.holder, h.superseded, h.holder))
			}
		}
	}
	return errors.Join(errs...)
}
