package demo

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/otherclients"
)

// otherClientLapseEvery is how often a lapsing process's hold outlives its lease: every third.
const otherClientLapseEvery = 3

// otherClientKeysPerNamespace is how many lock keys a service of another language competes
// for: few enough that a key that lapsed is soon taken over by the other process.
const otherClientKeysPerNamespace = 2

// otherClientWorker is one process of a service that locks with another language's client,
// whose commands it replays from Go (internal/otherclients): it takes one of its namespace's
// keys, does a job under the lock and releases it. Every lapseEvery-th hold runs past its lease
// without renewing it, as a stalled process does: the key expires under the job, the other
// process may take it over, and the late release is refused as not owned, which is all the
// client tells its application.
type otherClientWorker struct {
	name       string
	ns         Namespace
	rdb        *redis.Client
	clientID   string // the Redisson client's UUID
	keys       []string
	lapseEvery int // 0: never lapses
	holds      int
	tally      clientTally
}

// clientTally counts what a replayed client reported to its application.
type clientTally struct {
	acquired, released, renewed, notOwned atomic.Int64
}

// addOtherClientWorkers connects two processes, -a and -b, of each service that locks with
// another language's client; the -b process is the one whose holds lapse.
func (w *Workload) addOtherClientWorkers() {
	for _, ns := range w.namespaces {
		if ns.client == leaseClient {
			continue
		}
		for _, suffix := range []string{"-a", "-b"} {
			ro := *w.redisOpts
			o := &otherClientWorker{
				name: ns.Name + suffix, ns: ns, rdb: redis.NewClient(&ro),
				clientID: otherclients.RedissonClientID(), keys: otherClientKeys(ns),
			}
			if suffix == "-b" {
				o.lapseEvery = otherClientLapseEvery
			}
			w.others = append(w.others, o)
		}
	}
}

// otherClientKeys are the lock keys a namespace's processes compete for, under its pattern.
func otherClientKeys(ns Namespace) []string {
	item := map[clientKind]string{redisPyClient: "report:", redissonClient: "order:"}[ns.client]
	var keys []string
	for i := 1; i <= otherClientKeysPerNamespace; i++ {
		keys = append(keys, strings.TrimSuffix(ns.Pattern, "*")+item+strconv.Itoa(i))
	}
	return keys
}

// run takes holds until ctx ends.
func (o *otherClientWorker) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := o.holdOnce(ctx); err != nil {
			sleep(ctx, idle) // Redis failed: do not spin
		}
		sleep(ctx, between(idle/2, 2*idle))
	}
}

// holdOnce tries one of the keys once; a key held by the other process is skipped, as a
// non-blocking acquire does.
func (o *otherClientWorker) holdOnce(ctx context.Context) error {
	key := o.keys[randN(len(o.keys))]
	lapse := o.lapseEvery > 0 && (o.holds+1)%o.lapseEvery == 0
	hold := o.redisPyHold
	if o.ns.client == redissonClient {
		hold = o.redissonHold
	}
	held, err := hold(ctx, key, lapse)
	if held {
		o.holds++
	}
	return err
}

// redisPyHold is one report job under redis-py's Lock(timeout=TTL): most end well within the
// timeout, some extend the lock halfway through (a renewal, as redis-py's docs advise for long
// jobs), and a lapsing one outlives the timeout.
func (o *otherClientWorker) redisPyHold(ctx context.Context, key string, lapse bool) (bool, error) {
	ttl := o.ns.TTL
	l, err := otherclients.NewRedisPyLock(o.rdb, key, ttl)
	if err != nil {
		return false, err
	}
	if ok, err := l.Acquire(ctx); err != nil || !ok {
		return false, err
	}
	o.tally.acquired.Add(1)
	switch {
	case lapse:
		sleep(ctx, ttl*3/2)
	case randN(3) == 0:
		sleep(ctx, ttl/2)
		if err := l.Extend(ctx, ttl); err != nil {
			return true, o.settle(err)
		}
		o.tally.renewed.Add(1)
		sleep(ctx, between(ttl/2, ttl))
	default:
		sleep(ctx, between(ttl/10, ttl/2))
	}
	return true, o.settle(l.Release(ctx))
}

// redissonHold is one order under a Redisson RLock with the namespace's lease, renewed by the
// watchdog while the job runs; some jobs re-enter the lock (a nested call taking it again),
// and a lapsing one runs while its watchdog misses every renewal.
func (o *otherClientWorker) redissonHold(ctx context.Context, key string, lapse bool) (bool, error) {
	lease := o.ns.TTL
	l, err := otherclients.NewRedissonLock(o.rdb, key, o.clientID, 1, lease)
	if err != nil {
		return false, err
	}
	if held, _, err := l.Lock(ctx); err != nil || !held {
		return false, err
	}
	o.tally.acquired.Add(1)
	if lapse {
		o.watchdog(ctx, l, lease*3/2, false)
	} else if err := o.redissonJob(ctx, l); err != nil {
		return true, o.settle(err)
	}
	_, err = l.Unlock(ctx)
	return true, o.settle(err)
}

// redissonJob is a job that ends within its lease under a working watchdog; one in three
// re-enters the lock for a nested step and leaves it (a partial unlock) before it ends.
func (o *otherClientWorker) redissonJob(ctx context.Context, l *otherclients.RedissonLock) error {
	lease := o.ns.TTL
	if randN(3) == 0 {
		if _, _, err := l.Lock(ctx); err != nil {
			return err
		}
		o.watchdog(ctx, l, between(lease/10, lease/3), true)
		if _, err := l.Unlock(ctx); err != nil {
			return err
		}
	}
	o.watchdog(ctx, l, between(lease/6, lease*2/3), true)
	return nil
}

// watchdog lets a job run for job while Redisson's watchdog renews the lock every renew
// interval; a stalled watchdog (renewing false) lets the lease run out under the job. A
// renewal that finds the lock gone stops the watchdog without failing the job, as in Redisson.
func (o *otherClientWorker) watchdog(ctx context.Context, l *otherclients.RedissonLock, job time.Duration, renewing bool) {
	end := time.Now().Add(job)
	for left := job; left > 0; left = time.Until(end) {
		if !sleep(ctx, min(left, o.ns.RenewInterval)) {
			return
		}
		if !renewing || time.Until(end) <= 0 {
			continue
		}
		switch err := l.Renew(ctx); {
		case errors.Is(err, otherclients.ErrNotOwned):
			renewing = false
		case err == nil:
			o.tally.renewed.Add(1)
		}
	}
}

// settle counts how a hold ended as the client reports it: released, or refused as not owned
// because the lock lapsed under the job. Any other error is the caller's.
func (o *otherClientWorker) settle(err error) error {
	switch {
	case err == nil:
		o.tally.released.Add(1)
	case errors.Is(err, otherclients.ErrNotOwned):
		o.tally.notOwned.Add(1)
		return nil
	}
	return err
}
