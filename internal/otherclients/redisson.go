package otherclients

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The lock protocol of Redisson's RedissonLock (RLock), as of Redisson 3.23.5: the last 3.x
// release whose unlock writes nothing but the lock key and its channel (3.24.0 added an
// unlock-latch string key per unlock request). The scripts below are this package's own,
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
// The scripts answer the hold count where Redisson answers nil, so that a caller can tell a
// first acquisition from a re-entry; that changes nothing on the wire.
const (
	// RedissonVersion is the Redisson release whose protocol is replayed.
	RedissonVersion = "3.23.5"
	// RedissonWatchdogLease is the lease of lock() without a lease time, which the watchdog
	// renews every third of it (Config.lockWatchdogTimeout).
	RedissonWatchdogLease = 30 * time.Second
	// RedissonUnlockMessage is what an unlock that frees the lock publishes on its channel.
	RedissonUnlockMessage = "0"

	redissonChannelPrefix = "redisson_lock__channel"
)

var (
	// redissonLock: KEYS[1] lock name; ARGV[1] lease ms; ARGV[2] holder field.
	// Answers {1, count} when the holder has the lock after the call, {0, pttl} when another has it.
	redissonLock = redis.NewScript(`
local lock, lease, holder = KEYS[1], ARGV[1], ARGV[2]
if redis.call('exists', lock) == 1 and redis.call('hexists', lock, holder) == 0 then
  return {0, redis.call('pttl', lock)}
end
local count = redis.call('hincrby', lock, holder, 1)
redis.call('pexpire', lock, lease)
return {1, count}
`)
	// redissonRenew: KEYS[1] lock name; ARGV[1] lease ms; ARGV[2] holder field.
	// Answers 1 when renewed, 0 when the holder's field is gone.
	redissonRenew = redis.NewScript(`
local lock, lease, holder = KEYS[1], ARGV[1], ARGV[2]
if redis.call('hexists', lock, holder) == 0 then
  return 0
end
redis.call('pexpire', lock, lease)
return 1
`)
	// redissonUnlock: KEYS[1] lock name, KEYS[2] channel; ARGV[1] lease ms; ARGV[2] holder
	// field; ARGV[3] unlock message. Answers -1 when the holder has no field, else the count left
	// (0: the key was deleted and the unlock published).
	redissonUnlock = redis.NewScript(`
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
)

// RedissonLock is one thread's RLock on one name: the hash field "<client uuid>:<thread id>"
// and the lease its lock calls set (and its watchdog renews to).
type RedissonLock struct {
	rdb   redis.Scripter
	name  string
	field string
	lease time.Duration
}

// NewRedissonLock is thread threadID of the Redisson client clientID locking name with lease
// (RedissonWatchdogLease for lock() without a lease time).
func NewRedissonLock(rdb redis.Scripter, name, clientID string, threadID int64, lease time.Duration) (*RedissonLock, error) {
	if lease < time.Millisecond {
		return nil, fmt.Errorf("otherclients: Redisson lock %q: lease %v is under a millisecond", name, lease)
	}
	return &RedissonLock{rdb: rdb, name: name, field: fmt.Sprintf("%s:%d", clientID, threadID), lease: lease}, nil
}

// Lock tries once, as tryLock(0, lease): held reports whether the thread holds the lock after
// the call, and count how many times (above 1 after a re-entry).
func (l *RedissonLock) Lock(ctx context.Context) (held bool, count int64, err error) {
	res, err := redissonLock.Run(ctx, l.rdb, []string{l.name}, l.lease.Milliseconds(), l.field).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("otherclients: Redisson lock %q: %w", l.name, err)
	}
	if res[0] == 0 {
		return false, 0, nil
	}
	return true, res[1], nil
}

// Renew is one watchdog renewal: the expiry back to the lease, or ErrNotOwned when the thread's
// field is gone (Redisson then stops the watchdog and raises nothing).
func (l *RedissonLock) Renew(ctx context.Context) error {
	renewed, err := redissonRenew.Run(ctx, l.rdb, []string{l.name}, l.lease.Milliseconds(), l.field).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("otherclients: Redisson renew %q: %w", l.name, err)
	case renewed == 0:
		return fmt.Errorf("otherclients: Redisson renew %q: %w", l.name, ErrNotOwned)
	}
	return nil
}

// Unlock is unlock(): the hold count left (0: the key is deleted and the unlock published), or
// ErrNotOwned, Redisson's IllegalMonitorStateException, when the thread has no field.
func (l *RedissonLock) Unlock(ctx context.Context) (left int64, err error) {
	keys := []string{l.name, RedissonChannel(l.name)}
	left, err = redissonUnlock.Run(ctx, l.rdb, keys, l.lease.Milliseconds(), l.field, RedissonUnlockMessage).Int64()
	switch {
	case err != nil:
		return 0, fmt.Errorf("otherclients: Redisson unlock %q: %w", l.name, err)
	case left < 0:
		return 0, fmt.Errorf("otherclients: Redisson unlock %q: %w", l.name, ErrNotOwned)
	}
	return left, nil
}

// RedissonChannel is the channel a Redisson unlock publishes on: Redisson's prefixName, which
// keeps a name that already has a hash tag as it is.
func RedissonChannel(name string) string {
	if strings.Contains(name, "{") {
		return redissonChannelPrefix + ":" + name
	}
	return redissonChannelPrefix + ":{" + name + "}"
}

// RedissonClientID is a version 4 UUID: each Redisson client names itself by a random one.
func RedissonClientID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
