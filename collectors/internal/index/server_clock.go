package index

import (
	"sync"
	"time"
)

// ServerClock converts the exporter's clock to the server's, from the offset measured at the
// node's last TIME: the index keeps server times, so that a TTL from PEXPIRETIME and the scrape's
// TIME compare on one clock whatever the skew between the hosts.
type ServerClock struct {
	mu     sync.Mutex
	offset int64 // server ms − local ms
	// least is the least the offset can be: the server read its TIME before the reply was
	// received. 0 until the first TIME.
	least int64
	known bool
}

func (c *ServerClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UnixMilli() + c.offset
}

// Set records the server's TIME (ms) read between the local times sent and received.
func (c *ServerClock) Set(server int64, sent, received time.Time) {
	mid := sent.UnixMilli() + received.Sub(sent).Milliseconds()/2
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = server - mid
	c.least, c.known = server-received.UnixMilli(), true
}

// Earliest is the earliest the server's clock (ms) can have read at local time t: a lower
// bound, where now is an estimate; 0 before the first TIME.
func (c *ServerClock) Earliest(t time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known {
		return 0
	}
	return t.UnixMilli() - 1 + c.least // t's milliseconds are truncated
}
