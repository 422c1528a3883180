package lease

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Declare declares the lock namespace name with policy p and returns its handle. Declaring
// a namespace creates all its metric series at zero. A name can be declared once per Client: a
// second Declare of it returns ErrAlreadyDeclared.
func (c *Client) Declare(name string, p Policy) (*Namespace, error) {
	if name == "" || !utf8.ValidString(name) {
		return nil, fmt.Errorf("%w: namespace name must be non-empty UTF-8", ErrInvalidPolicy)
	}
	p, err := p.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("namespace %q: %w", name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.namespaces[name]; dup {
		return nil, fmt.Errorf("%w: namespace %q", ErrAlreadyDeclared, name)
	}
	n := &Namespace{
		client: c,
		name:   name,
		policy: p,
		m:      c.metrics.forNamespace(name),
		ttlMs:  p.TTL.Milliseconds(),
	}
	if p.LocalMutex {
		n.local = newLocalLocks()
	}
	c.namespaces[name] = n
	return n, nil
}

// Namespace takes leases under one declared Policy. It is safe for concurrent use.
type Namespace struct {
	client *Client
	name   string
	policy Policy
	m      *nsMetrics
	local  *localLocks
	ttlMs  any // policy.TTL in milliseconds, boxed once as a command argument
}

// Policy returns the namespace's policy with defaults filled in.
func (n *Namespace) Policy() Policy { return n.policy }

// Do acquires key (waiting as Acquire does), runs fn with the lease's context and fence token
// (0 without fencing), then releases the lease, also when fn panics. Release runs detached from
// ctx's cancellation, bounded by Policy.ReleaseTimeout. The error joins fn's error and the
// release's: ErrAbandoned if the lease was abandoned while fn ran, ErrNotOwned if it was lost.
func (n *Namespace) Do(ctx context.Context, key string, fn func(ctx context.Context, fence int64) error) (err error) {
	if fn == nil {
		// Refused before acquiring: a nil fn would panic with the lock held.
		return errNilFunc
	}
	l, err := n.Acquire(ctx, key)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := l.Release(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	return fn(l.ctx, l.fence)
}
