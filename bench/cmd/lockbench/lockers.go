package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/lease"
)

// lockTTL is the lock length every library is given; no cycle comes near it.
const lockTTL = 10 * time.Second

// cycleFunc makes one try-once lock attempt on the worker's key and, when the lock was taken,
// releases it. acquired reports whether the lock was taken; err is any other failure.
type cycleFunc func(ctx context.Context) (acquired bool, err error)

// variant is one library (or configuration) under test. worker binds a cycle to one key; it is
// called once per goroutine, so per-key state (redsync's Mutex) is built outside the timing.
type variant struct {
	name   string
	note   string
	worker func(key string) cycleFunc
	close  func()
	// redisKey is the Redis key the library locks for key (rueidislock adds a prefix).
	redisKey func(key string) string
	// sends counts how lease's default client sent its commands (-costs only; else nil).
	sends *sendCounts
}

// countSends installs a sendCounts hook on lease's default clients (-costs).
var countSends bool

func sameKey(key string) string { return key }

// goRedisOptions are the client options of every go-redis based variant. ContextTimeoutEnabled
// is what lease requires; the pool holds one connection per benchmark goroutine.
func goRedisOptions(addr string, conns int) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		PoolSize:              conns,
		MinIdleConns:          conns,
	}
}

// clientMode is how a go-redis based variant talks to Redis.
type clientMode int

const (
	plainClient  clientMode = iota
	autoPipeline            // go-redis's AutoPipeliner face
	noNetwork               // redishook.AnswerLocally: client-side work only
)

// goRedisClient returns the client a go-redis based variant runs on: the plain client, its
// AutoPipeliner face (which batches concurrent callers' commands into shared pipelines, as
// rueidis does by default), or the plain client answered in-process. Closing the plain client
// also closes its AutoPipeliner.
func goRedisClient(addr string, conns int, mode clientMode) (redis.UniversalClient, func(), string, error) {
	rdb := redis.NewClient(goRedisOptions(addr, conns))
	closeFn := func() { _ = rdb.Close() }
	switch mode {
	case autoPipeline:
		ap, err := rdb.AutoPipeline()
		if err != nil {
			closeFn()
			return nil, nil, "", fmt.Errorf("go-redis AutoPipeline: %w", err)
		}
		return ap, closeFn, autoSuffix, nil
	case noNetwork:
		rdb.AddHook(redishook.AnswerLocally{})
		return rdb, closeFn, "", nil
	}
	return rdb, closeFn, "", nil
}

// leaseWay is how a lease variant's commands reach Redis.
type leaseWay int

const (
	leaseDefault leaseWay = iota // the default Client: the adaptive sender
	leaseSingle                  // the single-command baseline: one command per round trip
)

// leaseWayLabels name each way in variant names and describe it in the report's Libraries table.
var leaseWayLabels = map[leaseWay]struct{ suffix, note string }{
	leaseDefault: {"", "default client: a command goes at once while fewer sends than the adaptive cap are on the wire, later ones are sent together as one pipeline by one of their callers"},
	leaseSingle:  {singleSuffix, "the single-command baseline: every command on its own, one round trip each (lease sends so on any client that is not a *redis.Client; here the same go-redis client behind a wrapper type)"},
}

// singleCommands is a go-redis client behind a type of its own: lease pipelines only on a
// *redis.Client, and sends every command on its own on any other UniversalClient (as on a
// Cluster or Ring client), so this is the single-command baseline with nothing else changed.
type singleCommands struct{ *redis.Client }

// leaseVariant builds lease on a go-redis client in mode, its commands sent the way way says.
func leaseVariant(addr string, conns int, metrics bool, way leaseWay, mode clientMode) (variant, error) {
	rdb, closeClient, suffix, err := goRedisClient(addr, conns, mode)
	if err != nil {
		return variant{}, err
	}
	var sends *sendCounts
	if one, ok := rdb.(*redis.Client); ok {
		switch {
		case way == leaseSingle:
			rdb = singleCommands{one}
		case countSends && mode == plainClient:
			sends = &sendCounts{}
			one.AddHook(sends)
		}
	}
	ns, closeLease, err := benchNamespace(rdb, metrics)
	if err != nil {
		closeClient()
		return variant{}, err
	}
	name, registry := leaseOff, "Registerer nil"
	if metrics {
		name, registry = leaseOn, "all seven lock_* families on a registry"
	}
	return variant{
		name:   name + suffix + leaseWayLabels[way].suffix,
		note:   registry + "; " + leaseWayLabels[way].note + "; TryAcquire + Release, default policy (renewer armed)",
		worker: leaseWorker(ns),
		close: func() {
			closeLease()
			closeClient()
		},
		redisKey: sameKey,
		sends:    sends,
	}, nil
}

// benchNamespace starts a lease Client on rdb, with its metrics on a registry of its own when
// metrics is set, and declares the namespace the benchmark locks in.
func benchNamespace(rdb redis.UniversalClient, metrics bool) (*lease.Namespace, func(), error) {
	opts := lease.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if metrics {
		opts.Registerer = prometheus.NewRegistry()
	}
	c, err := lease.New(rdb, opts)
	if err != nil {
		return nil, nil, err
	}
	ns, err := c.Declare("bench", lease.Policy{TTL: lockTTL})
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return ns, func() { _ = c.Close() }, nil
}

func leaseWorker(ns *lease.Namespace) func(key string) cycleFunc {
	return func(key string) cycleFunc {
		return func(ctx context.Context) (bool, error) {
			l, err := ns.TryAcquire(ctx, key)
			if errors.Is(err, lease.ErrBusy) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return true, l.Release(ctx)
		}
	}
}

func redislockVariant(addr string, conns int, mode clientMode) (variant, error) {
	rdb, closeFn, suffix, err := goRedisClient(addr, conns, mode)
	if err != nil {
		return variant{}, err
	}
	locker := redislock.New(rdb)
	return variant{
		name: "bsm/redislock" + suffix,
		note: "Obtain (NoRetry, the default) + Release",
		worker: func(key string) cycleFunc {
			return func(ctx context.Context) (bool, error) {
				l, err := locker.Obtain(ctx, key, lockTTL, nil)
				if errors.Is(err, redislock.ErrNotObtained) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				return true, l.Release(ctx)
			}
		},
		close:    closeFn,
		redisKey: sameKey,
	}, nil
}

func redsyncVariant(addr string, conns int, mode clientMode) (variant, error) {
	rdb, closeFn, suffix, err := goRedisClient(addr, conns, mode)
	if err != nil {
		return variant{}, err
	}
	rs := redsync.New(redsyncgoredis.NewPool(rdb))
	return variant{
		name: "redsync" + suffix,
		note: "one goredis pool; TryLockContext + UnlockContext; a failed try also runs its release script",
		worker: func(key string) cycleFunc {
			// A Mutex remembers its last value, so each goroutine owns one.
			m := rs.NewMutex(key, redsync.WithExpiry(lockTTL))
			return func(ctx context.Context) (bool, error) {
				err := m.TryLockContext(ctx)
				var taken *redsync.ErrTaken
				if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				ok, err := m.UnlockContext(ctx)
				if err == nil && !ok {
					err = errors.New("redsync: unlock reported not held")
				}
				return true, err
			}
		},
		close:    closeFn,
		redisKey: sameKey,
	}, nil
}

func rueidislockVariant(addr string) (variant, error) {
	locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:  1,
		KeyValidity:  lockTTL,
	})
	if err != nil {
		return variant{}, fmt.Errorf("rueidislock: %w", err)
	}
	return variant{
		name: "rueidislock",
		note: "KeyMajority 1 (one key); TryWithContext + cancel (waits for the DEL); rueidis auto-pipelining",
		worker: func(key string) cycleFunc {
			return func(ctx context.Context) (bool, error) {
				_, cancel, err := locker.TryWithContext(ctx, key)
				if errors.Is(err, rueidislock.ErrNotLocked) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				cancel()
				return true, nil
			}
		},
		close: locker.Close,
		// KeyMajority 1 locks one key: <KeyPrefix>:0:<name>.
		redisKey: func(key string) string { return "rueidislock:0:" + key },
	}, nil
}
