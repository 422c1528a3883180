package observe

import "time"

// oldestHeld is the age at now of the oldest lock ns holds, for lock_held_oldest_seconds at
// collection time. A lock whose every key is past its deadline is not counted even before a
// sweep removes it: a scrape's collectors run concurrently, so this cannot count on the
// sweep having run first.
func (t *tracker) oldestHeld(ns *namespace, now time.Time) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyPending()
	var oldest time.Time
	for id, e := range t.entries {
		if id.ns != ns || !e.held() || !e.liveAt(now) {
			continue
		}
		if oldest.IsZero() || e.heldSince.Before(oldest) {
			oldest = e.heldSince
		}
	}
	if oldest.IsZero() {
		return 0, false
	}
	return max(0, now.Sub(oldest)), true
}

// liveAt reports whether a key of the held lock is still before its deadline at now.
func (e *entry) liveAt(now time.Time) bool {
	for _, p := range e.parts {
		if p.deadline.After(now) {
			return true
		}
	}
	return false
}
