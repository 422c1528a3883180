package walk

import (
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// TypeSupport remembers, per node address, whether the server refused SCAN ... TYPE (Redis
// before 6.0): the first refusal switches that node to TYPE per key for the Scanner's lifetime.
type TypeSupport struct {
	mu        sync.Mutex
	confirmed map[string]bool
	refusedBy map[string]bool
}

// NewTypeSupport returns a TypeSupport that has seen no node yet.
func NewTypeSupport() *TypeSupport {
	return &TypeSupport{confirmed: map[string]bool{}, refusedBy: map[string]bool{}}
}

// Usable reports whether c's node may be sent SCAN ... TYPE: it has not refused one.
func (t *TypeSupport) Usable(c NodeClient) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.refusedBy[NodeAddr(c)]
}

// Confirm records that c's node answered a SCAN ... TYPE, so its later errors are errors.
func (t *TypeSupport) Confirm(c NodeClient) {
	addr := NodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.confirmed[addr] = true
}

// Refused reports whether err is a server refusing the TYPE argument: an error reply to a node's
// first SCAN ... TYPE. Once a node has answered one, its errors are errors.
func (t *TypeSupport) Refused(c NodeClient, err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(err.Error(), "ERR") {
		return false
	}
	addr := NodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.confirmed[addr] {
		return false
	}
	t.refusedBy[addr] = true
	return true
}
