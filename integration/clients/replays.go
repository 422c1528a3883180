package clients

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The clients below cannot be installed here (their packages come from PyPI, Maven Central and
// RubyGems), so their wire commands are replayed: rewritten from each project's source at the
// version named, doing to Redis what the client does. The recipes of docs/recipes.md are checked
// against the keys they leave.

// PythonRedisLock replays python-redis-lock 3.7.0's Lock: the key lock:<name> holds a random id
// (base64 of 18 random bytes) set with SET NX EX expire (no expiry when expire is None); release
// checks the id, deletes the key and pushes a token on the list lock-signal:<name> (which
// expires after signal_expire, 1000 ms by default) to wake blocked acquirers.
type PythonRedisLock struct{ rdb redis.UniversalClient }

// NewPythonRedisLock replays python-redis-lock on rdb.
func NewPythonRedisLock(rdb redis.UniversalClient) PythonRedisLock { return PythonRedisLock{rdb: rdb} }

// pythonRedisLockUnlock is the release: compare the id, then signal and delete.
var pythonRedisLockUnlock = redis.NewScript(`
if redis.call("get", KEYS[1]) ~= ARGV[1] then return 1 end
redis.call("del", KEYS[2])
redis.call("lpush", KEYS[2], 1)
redis.call("pexpire", KEYS[2], ARGV[2])
redis.call("del", KEYS[1])
return 0`)

// Acquire is Lock(redis, name, expire=expire).acquire(blocking=False); expire 0 is None. It
// returns the lock's id, which Release needs, and whether the lock was free.
func (p PythonRedisLock) Acquire(ctx context.Context, name string, expire time.Duration) (string, bool, error) {
	id := randomBase64(18)
	ok, err := p.rdb.SetNX(ctx, "lock:"+name, id, expire.Truncate(time.Second)).Result()
	return id, ok, err
}

// Release is Lock.release() with signal_expire 1000 ms.
func (p PythonRedisLock) Release(ctx context.Context, name, id string) error {
	code, err := pythonRedisLockUnlock.Run(ctx, p.rdb, []string{"lock:" + name, "lock-signal:" + name}, id, 1000).Int()
	if err == nil && code != 0 {
		return fmt.Errorf("python-redis-lock: NotAcquired: lock:%s", name)
	}
	return err
}

// ShedLock replays ShedLock 6's Redis provider (RedisLockProvider and its siblings share
// InternalRedisLockProvider, here with safeUpdate off, its default): the key <prefix>:<env>:<name> (job-lock:default:<name> by default)
// holds "ADDED:<ISO instant>@<host>:<uuid>", set with SET NX PX lockAtMostFor; unlock deletes it,
// unless lockAtLeastFor has not passed yet, when it is kept until then with SET XX PX.
type ShedLock struct {
	rdb redis.UniversalClient
	env string
}

// NewShedLock replays ShedLock with the default key prefix and environment env.
func NewShedLock(rdb redis.UniversalClient, env string) ShedLock { return ShedLock{rdb: rdb, env: env} }

// Key is the Redis key of the lock named name.
func (s ShedLock) Key(name string) string { return "job-lock:" + s.env + ":" + name }

// Lock takes the lock for at most lockAtMostFor; the returned value is what Unlock rewrites.
func (s ShedLock) Lock(ctx context.Context, name string, lockAtMostFor time.Duration) (string, bool, error) {
	value := fmt.Sprintf("ADDED:%s@%s:%s", time.Now().UTC().Format(time.RFC3339Nano), "replay-host", randomUUID())
	ok, err := s.rdb.SetNX(ctx, s.Key(name), value, lockAtMostFor).Result()
	return value, ok, err
}

// Unlock ends a task that started at started with lockAtLeastFor.
func (s ShedLock) Unlock(ctx context.Context, name, value string, started time.Time, lockAtLeastFor time.Duration) error {
	keep := time.Until(started.Add(lockAtLeastFor)).Milliseconds()
	if keep <= 0 {
		return s.rdb.Del(ctx, s.Key(name)).Err()
	}
	return s.rdb.SetXX(ctx, s.Key(name), value, time.Duration(keep)*time.Millisecond).Err()
}

// SidekiqUniqueJobs replays sidekiq-unique-jobs 8's lock of one job (queue.lua, lock.lua and
// unlock.lua with lock limit 1): a digest
// uniquejobs:<hash> and its companions <digest>:QUEUED (list), <digest>:PRIMED (list),
// <digest>:LOCKED (hash: job id → lock time) and <digest>:INFO, indexed in the sorted set
// uniquejobs:digests. The LOCKED hash is the lock; it expires only when lock_ttl is set.
type SidekiqUniqueJobs struct{ rdb redis.UniversalClient }

// NewSidekiqUniqueJobs replays sidekiq-unique-jobs on rdb.
func NewSidekiqUniqueJobs(rdb redis.UniversalClient) SidekiqUniqueJobs {
	return SidekiqUniqueJobs{rdb: rdb}
}

// sidekiqQueue is queue.lua: the digest names the job, the job id waits on QUEUED.
var sidekiqQueue = redis.NewScript(`
if redis.call("HEXISTS", KEYS[4], ARGV[1]) == 1 then return ARGV[1] end
local prev = redis.call("GET", KEYS[1])
if prev and prev ~= ARGV[1] then return prev end
redis.call("SET", KEYS[1], ARGV[1])
redis.call("LPUSH", KEYS[2], ARGV[1])
return ARGV[1]`)

// sidekiqLock is lock.lua for limit 1: the job id enters LOCKED, the digest is indexed, the
// keys expire only with a lock_ttl (ARGV[2], ms), and the transient lists go.
var sidekiqLock = redis.NewScript(`
if redis.call("HEXISTS", KEYS[4], ARGV[1]) == 1 then return ARGV[1] end
if redis.call("HLEN", KEYS[4]) >= 1 then return false end
redis.call("ZADD", KEYS[6], ARGV[3], KEYS[1])
redis.call("HSET", KEYS[4], ARGV[1], ARGV[3])
local pttl = tonumber(ARGV[2])
if pttl > 0 then
  redis.call("PEXPIRE", KEYS[1], pttl)
  redis.call("PEXPIRE", KEYS[4], pttl)
  redis.call("PEXPIRE", KEYS[5], pttl)
end
redis.call("UNLINK", KEYS[2], KEYS[3])
return ARGV[1]`)

// sidekiqUnlock is unlock.lua for a job holding a limit-1 lock: everything goes, and a token on
// QUEUED (expiring after 5 s) wakes a waiting worker.
var sidekiqUnlock = redis.NewScript(`
if redis.call("HEXISTS", KEYS[4], ARGV[1]) == 0 then return false end
redis.call("HDEL", KEYS[4], ARGV[1])
redis.call("UNLINK", KEYS[1], KEYS[5], KEYS[4], KEYS[3])
redis.call("ZREM", KEYS[6], KEYS[1])
redis.call("LPUSH", KEYS[2], "1")
redis.call("PEXPIRE", KEYS[2], 5000)
return ARGV[1]`)

// Digest is the Redis key of a unique job's digest (uniquejobs:<hash>).
func (SidekiqUniqueJobs) Digest(hash string) string { return "uniquejobs:" + hash }

func (s SidekiqUniqueJobs) keys(hash string) []string {
	d := s.Digest(hash)
	return []string{d, d + ":QUEUED", d + ":PRIMED", d + ":LOCKED", d + ":INFO", "uniquejobs:digests"}
}

// Lock queues and locks job id jid under the digest hash, with lockTTL (0: none, the default).
// It reports whether the job got the lock.
func (s SidekiqUniqueJobs) Lock(ctx context.Context, hash, jid string, lockTTL time.Duration) (bool, error) {
	keys := s.keys(hash)
	now := fmt.Sprintf("%.6f", float64(time.Now().UnixMicro())/1e6)
	if err := sidekiqQueue.Run(ctx, s.rdb, keys, jid).Err(); err != nil {
		return false, err
	}
	got, err := sidekiqLock.Run(ctx, s.rdb, keys, jid, lockTTL.Milliseconds(), now).Text()
	if err == redis.Nil {
		return false, nil
	}
	return got == jid, err
}

// Unlock ends job jid's lock under the digest hash.
func (s SidekiqUniqueJobs) Unlock(ctx context.Context, hash, jid string) error {
	err := sidekiqUnlock.Run(ctx, s.rdb, s.keys(hash), jid).Err()
	if err == redis.Nil {
		return fmt.Errorf("sidekiq-unique-jobs: job %s does not hold %s", jid, s.Digest(hash))
	}
	return err
}

func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// randomUUID is a version 4 UUID in its usual text form, as ShedLock's lock value carries one.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
