package collectors

import (
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// typeSupport remembers, per node address, whether the server refused SCAN ... TYPE (Redis
// before 6.0): the first refusal switches that node to TYPE per key for the Scanner's lifetime.
type typeSupport struct {
	mu        sync.Mutex
	confirmed map[string]bool
	refusedBy map[string]bool
}

func newTypeSupport() *typeSupport {
	return &typeSupport{confirmed: map[string]bool{}, refusedBy: map[string]bool{}}
}

func (t *typeSupport) usable(c nodeClient) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.refusedBy[nodeAddr(c)]
}

func (t *typeSupport) confirm(c nodeClient) {
	addr := nodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.confirmed[addr] = true
}

// refused reports whether err is a server refusing the TYPE argument: an error reply to a node's
// first SCAN ... TYPE. Once a node has answered one, its errors are errors.
func (t *typeSupport) refused(c nodeClient, err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(err.Error(), "ERR") {
		return false
	}
	addr := nodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.confirmed[addr] {
		return false
	}
	t.refusedBy[addr] = true
	return true
}
