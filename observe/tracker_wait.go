package observe

import "time"

// waiter is a value's retries while it waits, for lock_waiters. redislock (with a retry
// strategy) and redsync retry their acquire with the same value while their caller waits, so
// the wire shows a waiting caller as a value whose tries keep failing:
//
//   - it counts from its second failed try: a first busy attempt alone may be a caller that
//     does not retry (redislock's default, a TryLock), and counting it would be a guess;
//   - it stops counting when the value acquires, fails with an error, or its wait is given up
//     (GiveUpAfter without a try), and also when no try ends within lapseFactor times the
//     longest interval seen between the ends of two tries of one wait — its own or, as the
//     library's retry schedule is the same for every caller, any in the namespace — so that a
//     caller that gave up stops counting after a few of its retry intervals rather than after
//     GiveUpAfter. A try after that counts it again.
//
// A value seen refused on a key it holds itself is shared by several callers (a constant-value
// lock): their retries cannot be told apart, so the namespace counts no waiter from then on.
// rueidislock draws a new value for every try and waits for invalidations in between, so none
// of its values has a second try: its namespaces show no lock_waiters series.
//
// The latest try's end is the entry's lastAttempt.
type waiter struct {
	tries   uint32        // failed tries of the current wait
	counted bool          // counted in lock_waiters
	gap     time.Duration // the longest interval between the ends of two consecutive tries
}

// lapseFactor bounds the silence after which a waiter stops counting, in retry intervals: 3
// leaves room for a backoff that doubles (redislock's ExponentialBackoff) and for redsync's
// random delay (50 to 250 ms: up to five times its shortest, which the namespace's longest
// interval covers once a few waits have been seen).
const lapseFactor = 3

// attemptFailed records a busy attempt (one server) or a lost try (a Redlock) of the value's
// wait, from start to end.
func (t *tracker) attemptFailed(ns *namespace, e *entry, start, end time.Time) {
	if !e.waiting() {
		e.waitingSince = start
	}
	w := &e.wait
	if w.tries > 0 {
		gap := end.Sub(e.lastAttempt)
		w.gap = max(w.gap, gap)
		ns.retryGap = max(ns.retryGap, gap)
	}
	e.lastAttempt = end
	w.tries++
	if w.tries >= 2 && !w.counted && !ns.sharedValues {
		w.counted = true
		ns.m.Waiters.Inc()
	}
}

// endWait ends the value's wait (acquired, failed or given up).
func (t *tracker) endWait(ns *namespace, e *entry) {
	e.waitingSince = time.Time{}
	if e.wait.counted {
		ns.m.Waiters.Dec()
	}
	e.wait = waiter{}
}

// waiterLapsed stops counting a waiter that sent no try within lapseFactor retry intervals.
func (t *tracker) waiterLapsed(ns *namespace, e *entry, now time.Time) {
	w := &e.wait
	if w.counted && now.Sub(e.lastAttempt) > lapseFactor*max(w.gap, ns.retryGap) {
		w.counted = false
		ns.m.Waiters.Dec()
	}
}
