package demo

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Options configure a Workload.
type Options struct {
	// Addr is the Redis to use: host:port or a redis:// URL. Required.
	Addr string
	// Password authenticates to Redis when Addr does not carry one.
	Password string
	// Prefix starts every key the workload writes. Default DefaultPrefix.
	Prefix string
	// Logger receives the lease library's warnings (failed renews, abandonments): the first of
	// each kind, while repeats are counted in the status line. Nil means slog.Default().
	Logger *slog.Logger
	// TurbulencePeriod is how often the injected faults repeat. Default 20s.
	TurbulencePeriod time.Duration
}

// defaultTurbulencePeriod is how often the injected faults repeat.
const defaultTurbulencePeriod = 20 * time.Second

// Workload runs the demo's workers and turbulence against one Redis.
type Workload struct {
	opts       Options
	redisOpts  *redis.Options
	namespaces []Namespace
	reg        *prometheus.Registry
	admin      *redis.Client // writes the legacy no-TTL lock and removes demo keys
	replicas   map[string]*replica
	others     []*otherClientWorker // processes of services locking with other languages' clients
	turbulence atomic.Bool
	started    atomic.Int64 // Run's start, Unix nanoseconds; read by the status line
	stopped    atomic.Bool  // Run's workers have stopped: the status line says so, not "turbulence on"
	warnings   *repeatCounter
}

// New connects the workload's replicas to opts.Addr and declares its namespaces on a fresh
// registry, so every library metric has its series before the first lease is taken.
func New(opts Options) (*Workload, error) {
	if opts.Addr == "" {
		return nil, errors.New("demo: Redis address required")
	}
	opts = opts.withDefaults()
	ro, err := redisOptions(opts.Addr, opts.Password)
	if err != nil {
		return nil, err
	}
	warnings := newRepeatCounter(opts.Logger.Handler())
	opts.Logger = slog.New(warnings)
	w := &Workload{
		warnings:   warnings,
		opts:       opts,
		redisOpts:  ro,
		namespaces: Namespaces(opts.Prefix),
		reg:        prometheus.NewRegistry(),
		admin:      redis.NewClient(ro),
		replicas:   map[string]*replica{},
	}
	w.turbulence.Store(true)
	if err := w.addReplicas(); err != nil {
		w.Close()
		return nil, err
	}
	w.addOtherClientWorkers()
	return w, nil
}

// withDefaults fills in what opts leaves out.
func (opts Options) withDefaults() Options {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TurbulencePeriod <= 0 {
		opts.TurbulencePeriod = defaultTurbulencePeriod
	}
	return opts
}

// Ping checks that the workload's Redis answers and accepts its credentials, so a demo that
// could never take a lock says so at once instead of running with every count at zero.
func (w *Workload) Ping(ctx context.Context) error {
	return w.admin.Ping(ctx).Err()
}

// Registry holds the library metrics of every replica; serve it next to the exporter's.
func (w *Workload) Registry() *prometheus.Registry { return w.reg }

// Namespaces returns the workload's namespaces (see Namespaces).
func (w *Workload) Namespaces() []Namespace { return w.namespaces }

// Prefix returns the prefix of every key the workload writes.
func (w *Workload) Prefix() string { return w.opts.Prefix }

// SetTurbulence turns the injected faults on (the default) or off. Off heals every replica's
// network at the end of the current fault cycle and deletes the lock without expiry, as an
// operator following the runbook would.
func (w *Workload) SetTurbulence(on bool) { w.turbulence.Store(on) }

// Run runs the workers until ctx ends, then stops them, removes every demo key and closes the
// connections. It returns nil after a normal stop.
func (w *Workload) Run(ctx context.Context) error {
	defer w.Close()
	w.started.Store(time.Now().UnixNano())
	w.runWorkers(ctx)
	w.stopped.Store(true)
	for _, r := range w.replicas {
		r.link.heal()
	}
	cleanup, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return w.removeKeys(cleanup)
}

// uptime is how long Run has been running.
func (w *Workload) uptime() time.Duration {
	start := w.started.Load()
	if start == 0 {
		return 0
	}
	return time.Since(time.Unix(0, start))
}

// Close closes the workload's connections. Run does so when it returns; a caller that gives up
// before Run (the demo when its exporter cannot listen) calls Close instead.
func (w *Workload) Close() {
	w.admin.Close()
	for _, r := range w.replicas {
		r.rdb.Close()
	}
	for _, o := range w.others {
		o.rdb.Close()
	}
}
