package lease

import (
	"sync"
	"time"
)

// heldList is a namespace's held leases in the order they were acquired, linked through the
// leases themselves so that adding and removing one allocates nothing: the head is the oldest
// hold, which is all lock_held_oldest_seconds needs at collection time.
type heldList struct {
	mu         sync.Mutex
	head, tail *Lease
}

// push appends l and sets l.acquired. The time is read under mu, so the list stays in order of
// acquired and its head is the oldest.
func (h *heldList) push(l *Lease) {
	h.mu.Lock()
	l.acquired = time.Now()
	l.prevHeld, l.nextHeld = h.tail, nil
	if h.tail != nil {
		h.tail.nextHeld = l
	} else {
		h.head = l
	}
	h.tail = l
	h.mu.Unlock()
}

// remove unlinks l, which push added and remove did not remove yet.
func (h *heldList) remove(l *Lease) {
	h.mu.Lock()
	if l.prevHeld != nil {
		l.prevHeld.nextHeld = l.nextHeld
	} else {
		h.head = l.nextHeld
	}
	if l.nextHeld != nil {
		l.nextHeld.prevHeld = l.prevHeld
	} else {
		h.tail = l.prevHeld
	}
	l.prevHeld, l.nextHeld = nil, nil
	h.mu.Unlock()
}

// oldest is the age of the oldest held lease; a lockmetrics.OldestFunc.
func (h *heldList) oldest() (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.head == nil {
		return 0, false
	}
	return time.Since(h.head.acquired), true
}
