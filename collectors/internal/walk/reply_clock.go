package walk

import (
	"sync"
	"time"
)

// ReplyClock remembers when each node last answered a command of any walk. A node counts as
// reached by a walk when it answered after the walk started, even if the answer was to the
// previous walk's last pipeline: a Redis busy finishing the exporter's own commands is up, not
// down. (Without this, a scrape right after a cut one could see its first SCAN queued behind the
// cut walk's last pipelines past its deadline, and report a healthy Redis as down.)
type ReplyClock struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// NewReplyClock returns a ReplyClock that has heard no node.
func NewReplyClock() *ReplyClock { return &ReplyClock{last: map[string]time.Time{}} }

// Mark records that the node at addr answered at at.
func (c *ReplyClock) Mark(addr string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.last[addr]) {
		c.last[addr] = at
	}
}

// Since reports whether the node at addr answered at t or later.
func (c *ReplyClock) Since(addr string, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.last[addr].Before(t)
}
