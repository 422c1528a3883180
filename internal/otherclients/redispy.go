package otherclients

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of redis-py's redis.lock.Lock (4.x), as it sends them. Each compares the
// key's value with the caller's token first, so a stale holder cannot touch a new one's lock.
var (
	// redisPyRelease: KEYS[1] lock name; ARGV[1] token. 1 when deleted, 0 when not owned.
	redisPyRelease = redis.NewScript(`
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('del', KEYS[1])
        return 1
`)
	// redisPyExtend: KEYS[1] lock name; ARGV[1] token, ARGV[2] ms, ARGV[3] "1" to replace the
	// remaining time, "0" to add to it. 1 when extended, 0 when not owned or without expiry.
	redisPyExtend = redis.NewScript(`
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        local expiration = redis.call('pttl', KEYS[1])
        if not expiration then
            expiration = 0
        end
        if expiration < 0 then
            return 0
        end

        local newttl = ARGV[2]
        if ARGV[3] == "0" then
            newttl = ARGV[2] + expiration
        end
        redis.call('pexpire', KEYS[1], newttl)
        return 1
`)
	// redisPyReacquire: KEYS[1] lock name; ARGV[1] token, ARGV[2] the lock's timeout in ms.
	redisPyReacquire = redis.NewScript(`
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 1
`)
)

// RedisPyLock is one redis-py Lock object with a timeout: a string key holding the token of
// the acquire that took it, expiring after the timeout unless extended or reacquired.
type RedisPyLock struct {
	rdb     redis.Cmdable
	name    string
	timeout time.Duration
	token   string // of the last successful acquire; "" before
}

// NewRedisPyLock is redis-py's Lock(rdb, name, timeout=timeout, blocking=False). A timeout of
// at least a millisecond is required: redis-py's default of None leaves the key without expiry,
// which the demo has a lock of its own for.
func NewRedisPyLock(rdb redis.Cmdable, name string, timeout time.Duration) (*RedisPyLock, error) {
	if timeout < time.Millisecond {
		return nil, fmt.Errorf("otherclients: redis-py lock %q: timeout %v is under a millisecond", name, timeout)
	}
	return &RedisPyLock{rdb: rdb, name: name, timeout: timeout}, nil
}

// Acquire tries once, as acquire(blocking=False): SET name token NX PX timeout with a fresh
// token shaped like redis-py's uuid1().hex. It reports whether the lock was taken.
func (l *RedisPyLock) Acquire(ctx context.Context) (bool, error) {
	token := uuid1Hex(time.Now())
	ok, err := l.rdb.SetNX(ctx, l.name, token, l.timeout).Result()
	if err != nil || !ok {
		return false, err
	}
	l.token = token
	return true, nil
}

// Release is release(): ErrNotOwned when the key holds another token or none.
func (l *RedisPyLock) Release(ctx context.Context) error {
	return l.owned(redisPyRelease.Run(ctx, l.rdb, []string{l.name}, l.token).Int64())
}

// Extend is extend(additional): the remaining time grows by additional.
func (l *RedisPyLock) Extend(ctx context.Context, additional time.Duration) error {
	return l.owned(redisPyExtend.Run(ctx, l.rdb, []string{l.name}, l.token, additional.Milliseconds(), "0").Int64())
}

// Reacquire is reacquire(): the remaining time is reset to the lock's timeout.
func (l *RedisPyLock) Reacquire(ctx context.Context) error {
	return l.owned(redisPyReacquire.Run(ctx, l.rdb, []string{l.name}, l.token, l.timeout.Milliseconds()).Int64())
}

// owned turns a script's 1 or 0 into nil or ErrNotOwned.
func (l *RedisPyLock) owned(done int64, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("otherclients: redis-py lock %q: %w", l.name, err)
	case done == 0:
		return fmt.Errorf("otherclients: redis-py lock %q: %w", l.name, ErrNotOwned)
	}
	return nil
}

// gregorianToUnix is the number of 100 ns intervals from the UUID epoch (1582-10-15) to the
// Unix epoch.
const gregorianToUnix = 0x01B21DD213814000

// uuid1Hex is a version 1 UUID in redis-py's token form, 32 hex digits without dashes: the
// time in 100 ns intervals since 1582, a random clock sequence, and a random node with the
// multicast bit set, as RFC 4122 asks of a node that is not a MAC address.
func uuid1Hex(now time.Time) string {
	ts := uint64(now.UnixNano()/100) + gregorianToUnix
	var b [16]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(ts))
	binary.BigEndian.PutUint16(b[4:6], uint16(ts>>32))
	binary.BigEndian.PutUint16(b[6:8], uint16(ts>>48)&0x0fff|0x1000)
	_, _ = rand.Read(b[8:]) // crypto/rand.Read never fails
	b[8] = b[8]&0x3f | 0x80
	b[10] |= 0x01
	return hex.EncodeToString(b[:])
}
