package clients

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/otherclients"
)

// Redisson's lock protocol (RedissonLock, 3.23.5) is replayed by internal/otherclients, which
// lockwatch-demo drives too; see there for what each script does to the key and its channel.
// Redisson's jar cannot be fetched on the test machines.

// redissonNotLockedError is Redisson's IllegalMonitorStateException message at unlock.
const redissonNotLockedError = "attempt to unlock lock, not locked by current thread"

// RedissonChannel is the channel a Redisson unlock publishes on.
func RedissonChannel(name string) string { return otherclients.RedissonChannel(name) }

// redissonDriver is one Redisson client (one JVM): one client UUID, and a thread per holder.
type redissonDriver struct {
	rdb      redis.UniversalClient
	clientID string

	mu      sync.Mutex
	threads map[string]int64            // holder → its thread id
	leases  map[[2]string]time.Duration // holder, key → the lease its lock was taken with
}

// newRedissonDriver is a Redisson client of rdb (a server's client, or a Cluster's, which
// follows MOVED and ASK as Redisson's cluster mode does); it closes rdb when it closes.
func newRedissonDriver(ctx context.Context, rdb redis.UniversalClient) (*redissonDriver, error) {
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("%w: redisson: %v", ErrDriver, err)
	}
	return &redissonDriver{
		rdb:      rdb,
		clientID: otherclients.RedissonClientID(),
		threads:  map[string]int64{},
		leases:   map[[2]string]time.Duration{},
	}, nil
}

func (d *redissonDriver) Kind() Kind { return Redisson }

func (d *redissonDriver) Version() string {
	return fmt.Sprintf("redisson %s RedissonLock protocol (replayed by go-redis %s)", otherclients.RedissonVersion, redis.Version())
}

func (d *redissonDriver) Close() error { return d.rdb.Close() }

// rlock is the holder's RLock on key with lease: thread ids are handed out in the order holders
// first appear, as a JVM numbers its threads.
func (d *redissonDriver) rlock(holder, key string, lease time.Duration) (*otherclients.RedissonLock, error) {
	d.mu.Lock()
	id, ok := d.threads[holder]
	if !ok {
		id = int64(len(d.threads) + 1)
		d.threads[holder] = id
	}
	d.mu.Unlock()
	return otherclients.NewRedissonLock(d.rdb, key, d.clientID, id, lease)
}

func (d *redissonDriver) lease(s Step) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lease, ok := d.leases[[2]string{s.Holder, s.Key}]
	return lease, ok
}

func (d *redissonDriver) Do(ctx context.Context, s Step) (Outcome, error) {
	switch s.Op {
	case OpAcquire:
		return d.lock(ctx, s)
	case OpExtend:
		return d.renew(ctx, s)
	case OpRelease:
		return d.unlock(ctx, s)
	}
	return Outcome{Result: Unsupported, ErrorType: "DriverError", Error: fmt.Sprintf("op %q is not one Redisson has", s.Op)}, nil
}

func (d *redissonDriver) lock(ctx context.Context, s Step) (Outcome, error) {
	lease := s.TTL
	if lease == 0 {
		lease = otherclients.RedissonWatchdogLease
	}
	l, err := d.rlock(s.Holder, s.Key, lease)
	if err != nil {
		return Outcome{}, err
	}
	held, count, err := l.Lock(ctx)
	if err != nil {
		return redisError(err), nil
	}
	if !held {
		return Outcome{Result: Busy}, nil
	}
	d.mu.Lock()
	d.leases[[2]string{s.Holder, s.Key}] = lease
	d.mu.Unlock()
	if count > 1 {
		return Outcome{Result: Reentered}, nil
	}
	return Outcome{Result: Acquired}, nil
}

// held is the holder's RLock on the step's key with the lease it was acquired with, or false
// when the holder has acquired none there.
func (d *redissonDriver) held(s Step) (*otherclients.RedissonLock, bool, error) {
	lease, ok := d.lease(s)
	if !ok {
		return nil, false, nil
	}
	l, err := d.rlock(s.Holder, s.Key, lease)
	return l, err == nil, err
}

func (d *redissonDriver) renew(ctx context.Context, s Step) (Outcome, error) {
	l, ok, err := d.held(s)
	if !ok {
		return noRedissonLock(), err
	}
	switch err := l.Renew(ctx); {
	case errors.Is(err, otherclients.ErrNotOwned):
		return Outcome{Result: NotOwned, Error: "the watchdog's renewal found no field for this holder; Redisson stops renewing without raising"}, nil
	case err != nil:
		return redisError(err), nil
	}
	return Outcome{Result: Extended}, nil
}

func (d *redissonDriver) unlock(ctx context.Context, s Step) (Outcome, error) {
	l, ok, err := d.held(s)
	if !ok {
		return noRedissonLock(), err
	}
	left, err := l.Unlock(ctx)
	switch {
	case errors.Is(err, otherclients.ErrNotOwned):
		// Redisson's message goes on with the client's id, a holder identity: left out here.
		return Outcome{Result: NotOwned, ErrorType: "IllegalMonitorStateException", Error: redissonNotLockedError}, nil
	case err != nil:
		return redisError(err), nil
	case left > 0:
		return Outcome{Result: Decremented}, nil
	}
	return Outcome{Result: Released}, nil
}

func redisError(err error) Outcome {
	return Outcome{Result: Failed, ErrorType: "RedisError", Error: err.Error()}
}

func noRedissonLock() Outcome {
	return Outcome{Result: Failed, ErrorType: "DriverError", Error: "this holder has acquired no lock on this key"}
}
