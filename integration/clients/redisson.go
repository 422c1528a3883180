package clients

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The lock protocol of Redisson's RedissonLock (RLock), as of Redisson 3.23.5: the last 3.x
// release whose unlock writes nothing but the lock key and its channel (3.24.0 added an
// unlock-latch string key per unlock request). Redisson's jar cannot be fetched on the test
// machines, so its protocol is replayed from Go. The scripts below are this package's own,
// written from Redisson's documented behaviour; what they do to the lock key and the channel is
// what Redisson does:
//
//   - the lock is a hash at the lock's name; its one field is the holder,
//     "<client uuid>:<thread id>", and its value the holder's re-entry count;
//   - lock (tryLock with a lease, or lock() with the watchdog's 30 s): when the key is absent or
//     the field exists, HINCRBY the field by 1 and PEXPIRE the key to the lease; else answer the
//     key's PTTL (busy);
//   - watchdog renewal (every lease/3): PEXPIRE to the lease while the field exists, else answer
//     0, on which Redisson stops the watchdog without raising anything;
//   - unlock: no field is IllegalMonitorStateException; else HINCRBY the field by -1; above 0
//     PEXPIRE to the lease, at 0 DEL the key and PUBLISH "0" (LockPubSub's unlock message) on
//     redisson_lock__channel:{<name>}, where waiting lockers listen.
//
// The scripts answer the hold count where Redisson answers nil, so that the truth can tell a
// first acquisition from a re-entry; that changes nothing on the wire.
const (
	redissonVersion        = "3.23.5"
	redissonWatchdogLease  = 30 * time.Second
	redissonUnlockMessage  = "0"
	redissonChannelPrefix  = "redisson_lock__channel"
	redissonNotLockedError = "attempt to unlock lock, not locked by current thread"
)

// redissonLockScript: KEYS[1] lock name; ARGV[1] lease ms; ARGV[2] holder field.
// Answers {1, count} when the holder has the lock after the call, {0, pttl} when another has it.
var redissonLockScript = redis.NewScript(`
local lock, lease, holder = KEYS[1], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 1 and redis.call('hexists', lock, holder) == 0 then
  return {0, redis.call('pttl', lock)}
end
local count = redis.call('hincrby', lock, holder, 1)
redis.call('pexpire', lock, lease)
return {1, count}
`)

// redissonRenewScript: KEYS[1] lock name; ARGV[1] lease ms; ARGV[2] holder field.
// Answers 1 when renewed, 0 when the holder's field is gone.
var redissonRenewScript = redis.NewScript(`
local lock, lease, holder = KEYS[1], ARGV[1], ARGV[2]
if redis.call('hexists', lock, holder) == 0 then
  return 0
end
redis.call('pexpire', lock, lease)
return 1
`)

// redissonUnlockScript: KEYS[1] lock name, KEYS[2] channel; ARGV[1] lease ms; ARGV[2] holder
// field; ARGV[3] unlock message. Answers -1 when the holder has no field, else the count left
// (0: the key was deleted and the unlock published).
var redissonUnlockScript = redis.NewScript(`
local lock, channel = KEYS[1], KEYS[2]
local lease, holder, message = ARGV[1], ARGV[2], ARGV[3]
if redis.call('hexists', lock, holder) == 0 then
  return -1
end
local left = redis.call('hincrby', lock, holder, -1)
if left > 0 then
  redis.call('pexpire', lock, lease)
  return left
end
redis.call('del', lock)
redis.call('publish', channel, message)
return 0
`)

// RedissonChannel is the channel a Redisson unlock publishes on: Redisson's prefixName, which
// keeps a name that already has a hash tag as it is.
func RedissonChannel(name string) string {
	if strings.Contains(name, "{") {
		return redissonChannelPrefix + ":" + name
	}
	return redissonChannelPrefix + ":{" + name + "}"
}

// redissonDriver is one Redisson client (one JVM): one client UUID, and a thread per holder.
type redissonDriver struct {
	rdb      *redis.Client
	clientID string

	mu      sync.Mutex
	threads map[string]int64            // holder → its thread id
	leases  map[[2]string]time.Duration // holder, key → the lease its lock was taken with
}

func newRedissonDriver(ctx context.Context, addr string) (*redissonDriver, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("%w: redisson: %v", ErrDriver, err)
	}
	return &redissonDriver{
		rdb:      rdb,
		clientID: randomUUID(),
		threads:  map[string]int64{},
		leases:   map[[2]string]time.Duration{},
	}, nil
}

func (d *redissonDriver) Kind() Kind { return Redisson }

func (d *redissonDriver) Version() string {
	return fmt.Sprintf("redisson %s RedissonLock protocol (replayed by go-redis %s)", redissonVersion, redis.Version())
}

func (d *redissonDriver) Close() error { return d.rdb.Close() }

// field is the holder's hash field: Redisson's "<client uuid>:<thread id>". Thread ids are
// handed out in the order holders first appear, as a JVM numbers its threads.
func (d *redissonDriver) field(holder string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	id, ok := d.threads[holder]
	if !ok {
		id = int64(len(d.threads) + 1)
		d.threads[holder] = id
	}
	return fmt.Sprintf("%s:%d", d.clientID, id)
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
		lease = redissonWatchdogLease
	}
	res, err := redissonLockScript.Run(ctx, d.rdb, []string{s.Key}, lease.Milliseconds(), d.field(s.Holder)).Int64Slice()
	if err != nil {
		return redisError(err), nil
	}
	if res[0] == 0 {
		return Outcome{Result: Busy}, nil
	}
	d.mu.Lock()
	d.leases[[2]string{s.Holder, s.Key}] = lease
	d.mu.Unlock()
	if res[1] > 1 {
		return Outcome{Result: Reentered}, nil
	}
	return Outcome{Result: Acquired}, nil
}

func (d *redissonDriver) renew(ctx context.Context, s Step) (Outcome, error) {
	lease, ok := d.lease(s)
	if !ok {
		return noRedissonLock(), nil
	}
	renewed, err := redissonRenewScript.Run(ctx, d.rdb, []string{s.Key}, lease.Milliseconds(), d.field(s.Holder)).Int64()
	if err != nil {
		return redisError(err), nil
	}
	if renewed == 0 {
		return Outcome{Result: NotOwned, Error: "the watchdog's renewal found no field for this holder; Redisson stops renewing without raising"}, nil
	}
	return Outcome{Result: Extended}, nil
}

func (d *redissonDriver) unlock(ctx context.Context, s Step) (Outcome, error) {
	lease, ok := d.lease(s)
	if !ok {
		return noRedissonLock(), nil
	}
	keys := []string{s.Key, RedissonChannel(s.Key)}
	left, err := redissonUnlockScript.Run(ctx, d.rdb, keys, lease.Milliseconds(), d.field(s.Holder), redissonUnlockMessage).Int64()
	switch {
	case err != nil:
		return redisError(err), nil
	case left < 0:
		// Redisson's message goes on with the client's id, a holder identity: left out here.
		return Outcome{Result: NotOwned, ErrorType: "IllegalMonitorStateException", Error: redissonNotLockedError}, nil
	case left > 0:
		return Outcome{Result: Decremented}, nil
	}
	return Outcome{Result: Released}, nil
}

// randomUUID is a version 4 UUID: each Redisson client names itself by a random one.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func redisError(err error) Outcome {
	return Outcome{Result: Failed, ErrorType: "RedisError", Error: err.Error()}
}

func noRedissonLock() Outcome {
	return Outcome{Result: Failed, ErrorType: "DriverError", Error: "this holder has acquired no lock on this key"}
}
