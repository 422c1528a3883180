package observe

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Scripts that do what bsm/redislock's main branch does (obtain.lua, release.lua and
// refresh.lua, read at 76760bd), written for these tests: every key of an MGET compared with
// "~= ARGV[1]" before DEL or PEXPIRE, and an MSETNX acquire whose expiry is set through a local
// helper. Its next release sends these shapes; v0.9.4's SHAs no longer match them.
const (
	mainObtain = `
local function expireAll(ms)
	for _, k in ipairs(KEYS) do
		redis.call("pexpire", k, ms)
	end
end
local function sameTokens()
	local n = tonumber(ARGV[2])
	for _, k in ipairs(KEYS) do
		if redis.call("getrange", k, 0, n - 1) ~= string.sub(ARGV[1], 1, n) then
			return false
		end
	end
	return true
end
local pairsToSet = {}
for _, k in ipairs(KEYS) do
	table.insert(pairsToSet, k)
	table.insert(pairsToSet, ARGV[1])
end
if redis.call("msetnx", unpack(pairsToSet)) ~= 1 then
	if not sameTokens() then
		return false
	end
	redis.call("mset", unpack(pairsToSet))
end
expireAll(ARGV[3])
return redis.status_reply("OK")`
	mainRelease = `
local current = redis.call("mget", unpack(KEYS))
for i in ipairs(KEYS) do
	if current[i] ~= ARGV[1] then
		return false
	end
end
redis.call("del", unpack(KEYS))
return redis.status_reply("OK")`
	mainRefresh = `
local current = redis.call("mget", unpack(KEYS))
for i in ipairs(KEYS) do
	if current[i] ~= ARGV[1] then
		return false
	end
end
for _, k in ipairs(KEYS) do
	redis.call("pexpire", k, ARGV[2])
end
return redis.status_reply("OK")`
	// A rate limiter: it reads a key and compares with ARGV[1] too, but only counts.
	unrelatedCompare = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("incr", KEYS[2]) end return 0`
)

func TestClassifyBodyByBehaviour(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		want scriptInfo
	}{
		{"redislock main obtain: msetnx, expiry through a helper", mainObtain, scriptInfo{op: opAcquire, ttlArg: 3, ttl: ttlRelMillis}},
		{"redislock main release: mget, ~=, del", mainRelease, scriptInfo{op: opRelease}},
		{"redislock main refresh: mget, ~=, pexpire in a loop", mainRefresh, scriptInfo{op: opRefresh, ttlArg: 2, ttl: ttlRelMillis}},
		{"compare the other way round", `if ARGV[1] == redis.call("GET", KEYS[1]) then return redis.call("UNLINK", KEYS[1]) end return 0`, scriptInfo{op: opRelease}},
		{"an unrelated script that compares", unrelatedCompare, scriptInfo{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyBody(tt.body); got != tt.want {
				t.Fatalf("classifyBody = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The redislock-main shapes on a real server through the go-redis hook, on a two-key lock:
// one acquisition, a busy obtain, a refresh, a stale release and the owner's release.
func TestRedislockMainShapesOnRealServer(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := observeJobs(t, rdb)
	obtain, refresh, release := redis.NewScript(mainObtain), redis.NewScript(mainRefresh), redis.NewScript(mainRelease)
	keys := []string{"jobs:a", "jobs:b"}
	const owner, other = "owner-token-0123456789abcdef", "other-token-fedcba9876543210"
	const stale = "stale-token-00000000000000000" // a holder from before, in another process

	if err := obtain.Run(ctx, rdb, keys, owner, 22, 10000).Err(); err != nil {
		t.Fatalf("obtain: %v", err)
	}
	if err := obtain.Run(ctx, rdb, keys, other, 22, 10000).Err(); err != redis.Nil {
		t.Fatalf("second obtain = %v, want nil (busy)", err)
	}
	if err := refresh.Run(ctx, rdb, keys, owner, 20000).Err(); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
		t.Errorf("lock_held = %v with one two-key lock held, want 1", got)
	}
	if pttl := rdb.PTTL(ctx, "jobs:b").Val(); pttl < 15*time.Second {
		t.Fatalf("refresh did not run: PTTL %v", pttl)
	}
	if err := release.Run(ctx, rdb, keys, stale).Err(); err != redis.Nil {
		t.Fatalf("stale release = %v, want nil", err)
	}
	if err := release.Run(ctx, rdb, keys, owner).Err(); err != nil {
		t.Fatalf("release: %v", err)
	}
	checkJobs(t, reg,
		jobsValue{"lock_renewals_total", "ok", 1},
		jobsValue{"lock_releases_total", "ok", 1},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_held", "", 0},
	)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 1 {
		t.Errorf("%d acquisitions, want 1", n)
	}
	if n, _ := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != 1 {
		t.Errorf("%d holds ended, want 1", n)
	}
}
