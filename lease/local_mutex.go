package lease

import (
	"context"
	"sync"
)

// localLocks is the optional in-process layer in front of Redis: goroutines of one process
// that want the same key queue on a channel instead of polling Redis.
type localLocks struct {
	mu    sync.Mutex
	slots map[string]*localSlot
}

// localSlot is a one-token semaphore shared by the goroutines interested in one key; refs
// counts them so the map only holds keys someone holds or waits for.
type localSlot struct {
	sem  chan struct{}
	refs int
}

func newLocalLocks() *localLocks {
	return &localLocks{slots: make(map[string]*localSlot)}
}

// tryLock takes key's slot if it is free.
func (l *localLocks) tryLock(key string) bool {
	s := l.join(key)
	select {
	case s.sem <- struct{}{}:
		return true
	default:
	}
	l.leave(key, s)
	return false
}

// lock waits for key's slot until ctx is done, and reports whether it got it.
func (l *localLocks) lock(ctx context.Context, key string) bool {
	s := l.join(key)
	select {
	case s.sem <- struct{}{}:
		return true
	case <-ctx.Done():
	}
	l.leave(key, s)
	return false
}

// join registers interest in key's slot, creating it if needed.
func (l *localLocks) join(key string) *localSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.slots[key]
	if s == nil {
		s = &localSlot{sem: make(chan struct{}, 1)}
		l.slots[key] = s
	}
	s.refs++
	return s
}

func (l *localLocks) leave(key string, s *localSlot) {
	l.mu.Lock()
	l.dropLocked(key, s)
	l.mu.Unlock()
}

// unlock frees key's slot, taken by a successful lock.
func (l *localLocks) unlock(key string) {
	l.mu.Lock()
	s := l.slots[key]
	<-s.sem
	l.dropLocked(key, s)
	l.mu.Unlock()
}

// dropLocked forgets one interested goroutine; l.mu must be held.
func (l *localLocks) dropLocked(key string, s *localSlot) {
	s.refs--
	if s.refs == 0 {
		delete(l.slots, key)
	}
}
