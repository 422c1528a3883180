package lease

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Options configure a Client.
type Options struct {
	// Registerer receives the library's metrics (lock_acquire_wait_seconds, lock_renewals_total,
	// …). Nil means no metrics, at no cost. Clients may share a Registerer.
	Registerer prometheus.Registerer
	// Logger receives renew warnings and abandonments. Nil means slog.Default().
	Logger *slog.Logger
}

// Client takes lease locks on one Redis deployment. It is safe for concurrent use.
type Client struct {
	rdb     redis.UniversalClient
	logger  *slog.Logger
	metrics *metrics
	scripts scripts

	mu         sync.Mutex
	namespaces map[string]*Namespace
}

// scripts are the Lua scripts a Client runs, each defined as a constant next to its caller.
type scripts struct {
	acquireFenced, renew, release, fencedSet *redis.Script
}

// New returns a Client on rdb, which may be a single-node, Sentinel or Cluster client.
//
// Enable ContextTimeoutEnabled in rdb's options: without it go-redis ignores context deadlines
// on the wire, so RenewTimeout, ReleaseTimeout and AcquireTimeout are bounded only by the
// client's ReadTimeout and WriteTimeout. New logs a warning when it can see the option is off.
func New(rdb redis.UniversalClient, opts Options) (*Client, error) {
	if rdb == nil {
		return nil, errors.New("lease: New needs a redis client")
	}
	c := &Client{
		rdb:    rdb,
		logger: opts.Logger,
		scripts: scripts{
			acquireFenced: redis.NewScript(acquireFencedScript),
			renew:         redis.NewScript(renewScript),
			release:       redis.NewScript(releaseScript),
			fencedSet:     redis.NewScript(fencedSetScript),
		},
		namespaces: make(map[string]*Namespace),
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if contextTimeoutsOff(rdb) {
		c.logger.Warn("go-redis ContextTimeoutEnabled is off: lease timeouts are bounded by the client's read/write timeouts instead")
	}
	if opts.Registerer != nil {
		m, err := newMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		c.metrics = m
	}
	return c, nil
}

// Namespace declares the lock namespace name with policy p and returns its handle. Declaring
// a namespace creates all its metric series at zero. A name can be declared once per Client.
func (c *Client) Namespace(name string, p Policy) (*Namespace, error) {
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
		return nil, fmt.Errorf("%w: namespace %q is already declared", ErrInvalidPolicy, name)
	}
	n := &Namespace{
		client: c,
		name:   name,
		policy: p,
		m:      c.metrics.forNamespace(name),
	}
	if p.LocalMutex {
		n.local = newLocalLocks()
	}
	c.namespaces[name] = n
	return n, nil
}

// contextTimeoutsOff reports whether rdb is known to ignore context deadlines on the wire.
func contextTimeoutsOff(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return !c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return !c.Options().ContextTimeoutEnabled
	}
	return false
}
