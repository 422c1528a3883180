package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
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

// replica is one simulated worker process: its own connection pool behind its own link, and
// its own lease.Client (so local mutexes and renewers are per process, as in production).
type replica struct {
	name  string
	link  *link
	rdb   *redis.Client
	locks map[string]*lease.Namespace
	// freezeNext, when positive, is a pause the replica's next critical section suffers.
	freezeNext atomic.Int64
}

// Workload runs the demo's workers and turbulence against one Redis.
type Workload struct {
	opts       Options
	redisOpts  *redis.Options
	namespaces []Namespace
	reg        *prometheus.Registry
	admin      *redis.Client // writes the legacy no-TTL lock and removes demo keys
	replicas   map[string]*replica
	turbulence atomic.Bool
	started    atomic.Int64 // Run's start, Unix nanoseconds; read by the status line
	warnings   *repeatCounter
}

// New connects the workload's replicas to opts.Addr and declares its namespaces on a fresh
// registry, so every library metric has its series before the first lease is taken.
func New(opts Options) (*Workload, error) {
	if opts.Addr == "" {
		return nil, errors.New("demo: Redis address required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.TurbulencePeriod <= 0 {
		opts.TurbulencePeriod = defaultTurbulencePeriod
	}
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
	for _, name := range []string{"scheduler", "workflow", "approval", "reconciler", "snapshot"} {
		for _, suffix := range []string{"-a", "-b"} {
			if err := w.addReplica(name + suffix); err != nil {
				w.Close()
				return nil, err
			}
		}
	}
	return w, nil
}

// redisOptions accepts host:port or a redis:// or rediss:// URL.
func redisOptions(addr, password string) (*redis.Options, error) {
	ro := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if ro, err = redis.ParseURL(addr); err != nil {
			return nil, fmt.Errorf("demo: Redis URL: %v", err)
		}
	}
	// Without it go-redis ignores context deadlines on the wire, and renew timeouts would not
	// bound anything (see the lease package).
	ro.ContextTimeoutEnabled = true
	if password != "" && ro.Password == "" {
		ro.Password = password
	}
	// A failed command is reported as it failed: retries would blur the injected faults.
	ro.MaxRetries = -1
	return ro, nil
}

func (w *Workload) addReplica(name string) error {
	ro := *w.redisOpts
	r := &replica{name: name, link: &link{}, locks: map[string]*lease.Namespace{}}
	r.rdb = redis.NewClient(&ro)
	r.rdb.AddHook(r.link)
	w.replicas[name] = r
	c, err := lease.New(r.rdb, lease.Options{Registerer: w.reg, Logger: w.opts.Logger.With("replica", name)})
	if err != nil {
		return err
	}
	for _, ns := range w.namespaces {
		l, err := c.Namespace(ns.Name, ns.policy)
		if err != nil {
			return fmt.Errorf("demo: namespace %s: %w", ns.Name, err)
		}
		r.locks[ns.Name] = l
	}
	return nil
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
	var wg sync.WaitGroup
	spawn := func(f func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	for _, s := range []string{"scheduler-a", "scheduler-b"} {
		spawn(w.replicas[s].schedulerWorker(w.opts.Prefix))
	}
	for _, s := range []string{"workflow-a", "workflow-a", "workflow-b"} {
		spawn(w.replicas[s].workflowWorker(w.opts.Prefix))
	}
	for _, s := range []string{"approval-a", "approval-a", "approval-b", "approval-b"} {
		spawn(w.replicas[s].approvalWorker(w.opts.Prefix))
	}
	for _, s := range []string{"reconciler-a", "reconciler-b"} {
		spawn(w.replicas[s].reconcilerWorker(w.opts.Prefix))
	}
	for _, s := range []string{"snapshot-a", "snapshot-b"} {
		spawn(w.replicas[s].snapshotWorker(w.opts.Prefix))
	}
	spawn(w.turbulenceLoop)
	wg.Wait()
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
}

// removeKeys deletes the demo's lock keys and the library's companion keys ({lock}:fence, the
// fenced data's write-fence keys), and nothing else.
func (w *Workload) removeKeys(ctx context.Context) error {
	for _, pattern := range []string{w.opts.Prefix + "*", "{" + w.opts.Prefix + "*"} {
		iter := w.admin.Scan(ctx, 0, escapeGlob(pattern), 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("demo: remove demo keys: %w", err)
		}
		if len(keys) > 0 {
			if err := w.admin.Unlink(ctx, keys...).Err(); err != nil {
				return fmt.Errorf("demo: remove demo keys: %w", err)
			}
		}
	}
	return nil
}

// escapeGlob escapes glob characters in p except its final '*'.
func escapeGlob(p string) string {
	body := strings.TrimSuffix(p, "*")
	var b strings.Builder
	for _, r := range body {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String() + "*"
}

// sleep waits d or until ctx ends; it reports whether the full d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// between returns a random duration in [lo, hi).
func between(lo, hi time.Duration) time.Duration {
	return lo + rand.N(hi-lo)
}

func randN(n int) int { return rand.IntN(n) }
