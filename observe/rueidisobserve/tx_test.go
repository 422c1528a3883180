package rueidisobserve

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/observe"
)

// A lock command queued in a MULTI … EXEC block of DoMulti is answered QUEUED; its outcome is
// its element of EXEC's reply. A SET NX refused inside the transaction is busy, not acquired
// (QUEUED used to read as OK: acquired and held); a transaction that did not run (a WATCHed key
// changed, EXEC answered nil) counts nothing.
func TestLockCommandsInTransactions(t *testing.T) {
	srv := redistest.Start(t)
	reg := prometheus.NewRegistry()
	obs, err := observe.New(observe.Options{Registerer: reg, GiveUpAfter: 100 * time.Millisecond,
		Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	c := WithObserver(raw, obs)
	ctx := context.Background()
	set := func(key, value string) rueidis.Completed {
		return c.B().Set().Key(key).Value(value).Nx().Px(10 * time.Second).Build()
	}
	tx := func(cmds ...rueidis.Completed) []rueidis.RedisResult {
		t.Helper()
		all := append(append([]rueidis.Completed{c.B().Multi().Build()}, cmds...), c.B().Exec().Build())
		return c.DoMulti(ctx, all...)
	}
	if err := c.Do(ctx, set("jobs:1", "secret-value-a")).Error(); err != nil {
		t.Fatal(err)
	}
	tx(set("jobs:1", "secret-value-b")) // refused: A holds it
	tx(set("jobs:2", "secret-value-c")) // acquired
	// Not run: the WATCHed key changes before EXEC (by this very connection).
	resps := c.DoMulti(ctx, c.B().Watch().Key("jobs:w").Build(), c.B().Set().Key("jobs:w").Value("x").Build(),
		c.B().Multi().Build(), set("jobs:3", "secret-value-d"), c.B().Exec().Build())
	if msg, err := resps[len(resps)-1].ToMessage(); !rueidis.IsRedisNil(err) {
		t.Fatalf("EXEC after a WATCHed change = %v %v, want nil", msg, err)
	}
	// Discarded: nothing ran.
	c.DoMulti(ctx, c.B().Multi().Build(), set("jobs:4", "secret-value-e"), c.B().Discard().Build())
	// A compare-and-delete in a transaction releases C's lock.
	release := c.B().Eval().Script(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`).
		Numkeys(1).Key("jobs:2").Arg("secret-value-c").Build()
	tx(release)

	metric := func(name string, labels ...string) float64 {
		return testkit.MetricValue(t, reg, name, append([]string{"lock_namespace", "jobs"}, labels...)...)
	}
	if got := metric("lock_acquire_wait_seconds", "outcome", "acquired"); got != 2 {
		t.Errorf("acquired = %v, want 2 (A's and C's)", got)
	}
	if got := metric("lock_held"); got != 1 {
		t.Errorf("lock_held = %v, want 1 (A's)", got)
	}
	if got := metric("lock_releases_total", "outcome", "ok"); got != 1 {
		t.Errorf("releases ok = %v, want 1", got)
	}
	time.Sleep(300 * time.Millisecond) // B's refused try is given up
	if got := metric("lock_acquire_wait_seconds", "outcome", "busy"); got != 1 {
		t.Errorf("busy = %v, want 1 (B's, refused inside the transaction)", got)
	}
	if got := metric("lock_acquire_wait_seconds", "outcome", "error"); got != 0 {
		t.Errorf("error = %v, want 0", got)
	}
}
