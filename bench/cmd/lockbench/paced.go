package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// paced runs op rate times a second for d, one call at a time, as a client that sends each
// command on its own round trip does. On a loaded machine it falls behind and catches up, so it
// always makes rate×d calls; the span it takes is the measured window.
func paced(ctx context.Context, rate int, d time.Duration, op func(context.Context) error) error {
	total := int(float64(rate) * d.Seconds())
	start := time.Now()
	for done := 0; done < total; {
		due := min(total, int(time.Since(start).Seconds()*float64(rate)))
		for ; done < due; done++ {
			if err := op(ctx); err != nil {
				return err
			}
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// lockTrafficKeys is how many lock names the lock traffic takes its keys from.
const lockTrafficKeys = 10_000

// lockTrafficTTL is the lease the lock traffic's locks are taken and renewed for.
const lockTrafficTTL = 30 * time.Second

// The scripts of redis-py's Lock (redis/lock.py): release and reacquire compare the token first.
var (
	redisPyRelease = redis.NewScript(`if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("del", KEYS[1]) return 1`)
	redisPyReacquire = redis.NewScript(`if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("pexpire", KEYS[1], ARGV[2]) return 1`)
)

// lockTraffic is a lock client's workload, as redis-py's Lock sends it: a third of the
// operations take a lock (SET NX PX), a third renew one (the reacquire script), a third release
// one (the release script). Holders take turns, each one operation at a time.
type lockTraffic struct {
	c       *redis.Client
	rng     *rand.Rand
	holders []heldLock
	next    int
}

// heldLock is one holder: the lock it holds (key "" for none) and how far through its hold it is.
type heldLock struct {
	key, token string
	renewed    bool
}

func newLockTraffic(c *redis.Client, holders int) *lockTraffic {
	return &lockTraffic{c: c, rng: rand.New(rand.NewPCG(3, 39)), holders: make([]heldLock, holders)}
}

// op moves the next holder one step: take a lock, renew it, release it.
func (t *lockTraffic) op(ctx context.Context) error {
	h := &t.holders[t.next%len(t.holders)]
	t.next++
	var err error
	switch {
	case h.key == "":
		key, token := fmt.Sprintf("locks:job:w%d", t.rng.IntN(lockTrafficKeys)), fmt.Sprintf("%016x", t.rng.Uint64())
		var ok bool
		if ok, err = t.c.SetNX(ctx, key, token, lockTrafficTTL).Result(); ok {
			*h = heldLock{key: key, token: token}
		}
	case !h.renewed:
		err = redisPyReacquire.Run(ctx, t.c, []string{h.key}, h.token, lockTrafficTTL.Milliseconds()).Err()
		h.renewed = true
	default:
		err = redisPyRelease.Run(ctx, t.c, []string{h.key}, h.token).Err()
		*h = heldLock{}
	}
	return err
}

// otherWrites writes non-lock keys, the cache keys DEBUG POPULATE made, in pipelines of
// otherWritesBatch SETs: Redis's cost per write is then mostly the write's own, not its round
// trip's, so what a notification adds to it stands out of the noise.
type otherWrites struct {
	c    *redis.Client
	rng  *rand.Rand
	keys int
}

const otherWritesBatch = 100

func (w *otherWrites) batch(ctx context.Context) error {
	pipe := w.c.Pipeline()
	for range otherWritesBatch {
		pipe.Set(ctx, fmt.Sprintf("cache:%d", w.rng.IntN(max(1, w.keys))), "a cache value of some 32 bytes..", 0)
	}
	_, err := pipe.Exec(ctx)
	return err
}
