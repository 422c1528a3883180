package clients

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// stepTimeout bounds one step, so that a hung driver fails the test instead of hanging it;
	// far above a step's time on a loaded machine.
	stepTimeout = 30 * time.Second
	// gonePoll is how often WaitGone asks Redis whether a key is still there.
	gonePoll = 2 * time.Millisecond
	// goneSlack is how long past its TTL WaitGone waits for a key to be gone before it fails.
	goneSlack = 30 * time.Second
)

// RedisKey is the Redis key a client stores its lock named name at: redis-semaphore's Mutex
// prefixes mutex:, the others use the name as it is.
func RedisKey(kind Kind, name string) string {
	if kind == RedisSemaphore {
		return "mutex:" + name
	}
	return name
}

// Runner plays holders of several drivers in the order a test scripts, and records the truth.
// It takes one step at a time across all its holders, even when goroutines share it: the order
// in which the truth records the answers must be the order in which Redis applied the steps.
type Runner struct {
	tb    testing.TB
	rdb   *redis.Client         // nil on a Cluster
	keys  redis.UniversalClient // reads the keys: rdb, or a Cluster's client
	truth *Truth

	mu    sync.Mutex // one step at a time; guards names
	names map[string]bool
}

// NewRunner returns a Runner for the Redis at addr; its own connection, used to wait for keys
// to lapse, is closed when the test ends.
func NewRunner(tb testing.TB, addr string) *Runner {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	tb.Cleanup(func() { _ = rdb.Close() })
	return &Runner{tb: tb, rdb: rdb, keys: rdb, truth: NewTruth(), names: map[string]bool{}}
}

// NewClusterRunner returns a Runner for the Redis Cluster whose node is at seed: it waits for
// keys to lapse through a cluster client, wherever their slot is served. Its Redis is nil.
func NewClusterRunner(tb testing.TB, seed string) *Runner {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}})
	tb.Cleanup(func() { _ = cc.Close() })
	return &Runner{tb: tb, keys: cc, truth: NewTruth(), names: map[string]bool{}}
}

// Truth returns what the clients reported so far.
func (r *Runner) Truth() *Truth { return r.truth }

// Redis returns the runner's own connection, for tests that look at the keys; nil for a
// Cluster's runner.
func (r *Runner) Redis() *redis.Client { return r.rdb }

// Holder is one worker: a named lock object in a driver.
type Holder struct {
	name string
	d    Driver
	r    *Runner
}

// Holder returns the holder called name in driver d. Names are unique in a Runner: the truth
// tells holders apart by them.
func (r *Runner) Holder(d Driver, name string) *Holder {
	r.tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names[name] {
		r.tb.Fatalf("clients: holder %q already exists in this runner", name)
	}
	r.names[name] = true
	return &Holder{name: name, d: d, r: r}
}

// Name returns the holder's name.
func (h *Holder) Name() string { return h.name }

// Kind returns the holder's client kind.
func (h *Holder) Kind() Kind { return h.d.Kind() }

// Do takes one step as this holder, records its outcome in the truth and returns it. A driver
// failure fails the test.
func (h *Holder) Do(op Op, name string, ttl time.Duration) Outcome {
	h.r.tb.Helper()
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	ctx, cancel := context.WithTimeout(h.r.tb.Context(), stepTimeout)
	defer cancel()
	out, err := h.d.Do(ctx, Step{Op: op, Holder: h.name, Key: name, TTL: ttl})
	if err != nil {
		h.r.tb.Fatalf("clients: %s %s %s: %v", h.name, op, name, err)
	}
	h.r.truth.Record(h.name, RedisKey(h.Kind(), name), out)
	return out
}

// Acquire tries once to take the lock called name with the given lease.
func (h *Holder) Acquire(name string, ttl time.Duration) Outcome { return h.Do(OpAcquire, name, ttl) }

// Release releases the holder's lock called name.
func (h *Holder) Release(name string) Outcome { return h.Do(OpRelease, name, 0) }

// Extend renews the holder's lock called name (see OpExtend for what ttl means per client).
func (h *Holder) Extend(name string, ttl time.Duration) Outcome { return h.Do(OpExtend, name, ttl) }

// WaitGone polls Redis until key (a Redis key, see RedisKey) is gone, and fails the test when
// it is still there goneSlack past ttl. EXISTS on an expired key answers 0 at once: Redis drops
// expired keys when they are read.
func (r *Runner) WaitGone(key string, ttl time.Duration) {
	r.tb.Helper()
	ctx, cancel := context.WithTimeout(r.tb.Context(), ttl+goneSlack)
	defer cancel()
	tick := time.NewTicker(gonePoll)
	defer tick.Stop()
	for {
		n, err := r.keys.Exists(ctx, key).Result()
		if err != nil {
			r.tb.Fatalf("clients: wait for %s to be gone: %v", key, err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			r.tb.Fatalf("clients: %s still exists %v after a lease of %v", key, goneSlack, ttl)
		case <-tick.C:
		}
	}
}

// Lapse makes the lock called name lapse under stale and be taken by next: stale acquires it
// with lease ttl, Redis drops the key when the lease ends, then next acquires it with nextTTL.
// The truth learns of the lapse only when stale's client reports it: drive stale's release or
// extend afterwards.
func (r *Runner) Lapse(name string, stale *Holder, ttl time.Duration, next *Holder, nextTTL time.Duration) {
	r.tb.Helper()
	if out := stale.Acquire(name, ttl); out.Result != Acquired {
		r.tb.Fatalf("clients: lapse %s: %s's acquire: %v, want acquired", name, stale.name, out)
	}
	r.WaitGone(RedisKey(stale.Kind(), name), ttl)
	if out := next.Acquire(name, nextTTL); out.Result != Acquired {
		r.tb.Fatalf("clients: lapse %s: %s's acquire after the lapse: %v, want acquired", name, next.name, out)
	}
}
