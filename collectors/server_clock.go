package collectors

import (
	"sync"
	"time"
)

// serverClock converts the exporter's clock to the server's, from the offset measured at the
// node's last TIME: the index keeps server times, so that a TTL from PEXPIRETIME and the scrape's
// TIME compare on one clock whatever the skew between the hosts.
type serverClock struct {
	mu     sync.Mutex
	offset int64 // server ms − local ms
	// least is the least the offset can be: the server read its TIME before the reply was
	// received. 0 until the first TIME.
	least int64
	known bool
}

func (c *serverClock) now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UnixMilli() + c.offset
}

// set records the server's TIME (ms) read between the local times sent and received.
func (c *serverClock) set(server int64, sent, received time.Time) {
	mid := sent.UnixMilli() + received.Sub(sent).Milliseconds()/2
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = server - mid
	c.least, c.known = server-received.UnixMilli(), true
}

// earliest is the earliest the server's clock (ms) can have read at local time t: a lower
// bound, where now is an estimate; 0 before the first TIME.
func (c *serverClock) earliest(t time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known {
		return 0
	}
	return t.UnixMilli() - 1 + c.least // t's milliseconds are truncated
}
