package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// Options configure a Client.
type Options struct {
	// Registerer receives the library's metrics (lock_acquire_wait_seconds, lock_renewals_total,
	// …). Nil means no metrics, at no cost. Clients may share a Registerer.
	Registerer prometheus.Registerer
	// MeterProvider is the alternative to Registerer for an application instrumented with
	// OpenTelemetry: the same metrics become OTel instruments on its meter
	// "github.com/lockwatch/lockwatch", named so that Prometheus' OTLP translation (with type
	// and unit suffixes, its default) gives the contract's names and labels (see
	// docs/metrics.md). The library starts no exporter; the provider's readers decide where
	// measurements go. Nil means no OTel metrics; pass otel.GetMeterProvider() for the global
	// one. Setting both Registerer and MeterProvider is an error: one process, one path.
	MeterProvider metric.MeterProvider
	// Logger receives renew warnings and abandonments. Nil means slog.Default().
	Logger *slog.Logger
	// Holder describes this process in the holder key of locks taken by namespaces with
	// Policy.RecordHolder, for operators asking who holds a lock. Empty means
	// "<host name> pid <pid>". At most 256 bytes of UTF-8 without control characters; it is
	// readable with the exporter's ACL, so it must not contain secrets.
	Holder string
}

// Client takes lease locks on one Redis deployment. It is safe for concurrent use.
type Client struct {
	rdb     redis.UniversalClient
	logger  *slog.Logger
	metrics *metrics
	send    *wire.Sender
	holder  string // Options.Holder or its default

	closeOnce sync.Once
	closed    atomic.Bool

	mu         sync.Mutex
	namespaces map[string]*Namespace
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
		rdb:        rdb,
		logger:     opts.Logger,
		namespaces: make(map[string]*Namespace),
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.holder = opts.Holder
	if c.holder == "" {
		c.holder = defaultHolder()
	}
	if err := checkHolder(c.holder); err != nil {
		return nil, err
	}
	if contextTimeoutsOff(rdb) {
		c.logger.Warn("go-redis ContextTimeoutEnabled is off: lease timeouts are bounded by the client's read/write timeouts instead")
	}
	m, err := metricsFor(opts)
	if err != nil {
		return nil, err
	}
	c.metrics = m
	c.send = wire.NewSender(rdb)
	return c, nil
}

// metricsFor builds the metrics opts ask for: client_golang, OTel, or none (nil).
func metricsFor(opts Options) (*metrics, error) {
	switch {
	case opts.Registerer != nil && opts.MeterProvider != nil:
		return nil, fmt.Errorf("%w: set Options.Registerer or Options.MeterProvider, not both", ErrInvalidPolicy)
	case opts.Registerer != nil:
		return newMetrics(opts.Registerer)
	case opts.MeterProvider != nil:
		return newOTelMetrics(opts.MeterProvider)
	}
	return nil, nil
}

// Close stops the Client: commands already queued for a pipeline are still sent, later ones
// fail with ErrClosed. With a MeterProvider, the Client's counters and lock_held stop being reported;
// with a Registerer its leases leave lock_held_oldest_seconds (the families and their counts stay,
// shared with the registry's other producers), so a registry does not keep a closed Client reachable.
// Release held leases first: their renewers fail from now on (and Abandon leases are abandoned).
// Close does not close rdb, which stays the caller's. Calling it again does nothing.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		err = c.metrics.close()
	})
	return err
}

// setNX runs SET key token PX ttlMs NX. Its arguments come boxed, as the namespace and the
// lease keep them, so that the command boxes none of them. Its error never quotes them
// (withoutArgs): they hold the lock token.
func (c *Client) setNX(ctx context.Context, key, token, ttlMs any) (bool, error) {
	if c.closed.Load() {
		return false, ErrClosed
	}
	cmd := redis.NewBoolCmd(ctx, "set", key, token, "px", ttlMs, "nx")
	if err := c.send.Do(ctx, cmd); err != nil {
		return false, withoutArgs(err)
	}
	return cmd.Val(), nil
}

// runScript runs s with its first numKeys keysAndArgs as keys and the rest as arguments. Its
// error never quotes them (withoutArgs): they hold the lock token.
func (c *Client) runScript(ctx context.Context, s wire.Script, numKeys int, keysAndArgs ...any) (int64, error) {
	if c.closed.Load() {
		return 0, ErrClosed
	}
	n, err := c.send.Run(ctx, s, numKeys, keysAndArgs...)
	return n, withoutArgs(err)
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
