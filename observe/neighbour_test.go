package observe

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Another client of the Redis replaced a held lock's key with a hash (a library that keeps its
// locks in hashes, under the same name). The holder's compare-and-pexpire and compare-and-delete
// scripts are answered WRONGTYPE: the key no longer holds the holder's value, so the renew and
// the release are not_owned and the lock is no longer held, as lease counts its own (not a
// failure in transit, which would leave the lock counted in lock_held until its TTL).
func TestLockKeyReplacedByAnotherTypeIsNotOwned(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	neighbour := srv.Client(t)
	reg := observeJobs(t, rdb)
	release := redis.NewScript(testRelease)
	refresh := redis.NewScript(testRefresh)
	const held = "secret-value-A-7f3a"
	if ok, err := rdb.SetNX(ctx, "jobs:1", held, time.Minute).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if err := neighbour.Del(ctx, "jobs:1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := neighbour.HSet(ctx, "jobs:1", "owner", "someone else").Err(); err != nil {
		t.Fatal(err)
	}
	if err := refresh.Run(ctx, rdb, []string{"jobs:1"}, held, 60000).Err(); err == nil {
		t.Fatal("refresh of a hash succeeded: the test shows nothing")
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 0 {
		t.Errorf("lock_held = %v after a renew answered WRONGTYPE, want 0", got)
	}
	if err := release.Run(ctx, rdb, []string{"jobs:1"}, held).Err(); err == nil {
		t.Fatal("release of a hash succeeded: the test shows nothing")
	}
	checkJobs(t, reg,
		jobsValue{"lock_held", "", 0},
		jobsValue{"lock_renewals_total", "not_owned", 1},
		jobsValue{"lock_renewals_total", "failed", 0},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_releases_total", "error", 0},
	)
	assertNoToken(t, reg, held)
}
