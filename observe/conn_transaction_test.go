package observe

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// connGiveUp is the GiveUpAfter of the Conn transaction tests: short, so that a busy attempt
// is counted (or shown not to be) soon after it.
const connGiveUp = 100 * time.Millisecond

// observeConnTx hooks onto rdb an Observer of the namespace "jobs" (jobs:*) that gives a busy
// value up after connGiveUp, and returns the registry.
func observeConnTx(t *testing.T, rdb *redis.Client) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, GiveUpAfter: connGiveUp,
		Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rdb.AddHook(obs.Hook())
	return reg
}

// wantAcquires checks lock_acquire_wait_seconds{jobs} by outcome, after a wait past connGiveUp
// so that any busy value has been given up.
func wantAcquires(t *testing.T, reg prometheus.Gatherer, acquired, busy, failed uint64) {
	t.Helper()
	time.Sleep(connGiveUp + 50*time.Millisecond)
	for outcome, want := range map[string]uint64{"acquired": acquired, "busy": busy, "error": failed} {
		if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", outcome); n != want {
			t.Errorf("lock_acquire_wait_seconds{%s} count = %d, want %d", outcome, n, want)
		}
	}
}

// mustQueue sends cmd inside an open MULTI block and fails t unless the server queued it.
func mustQueue(t *testing.T, cmd redis.Cmder) {
	t.Helper()
	if err := cmd.Err(); err != nil {
		t.Fatalf("%v: %v", cmd.Args(), err)
	}
}

// MULTI … EXEC sent as separate calls on a dedicated connection (rdb.Conn()): each queued
// command is answered QUEUED, which go-redis reads as false for SetNX (a refused acquire) and
// as a success for a Do; the outcome is the command's element of EXEC's reply. A second
// client's transaction on the held key counts busy.
func TestTransactionOnAConn(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	a := rdb.Conn()
	defer a.Close()
	mustQueue(t, a.Do(ctx, "multi"))
	mustQueue(t, a.SetNX(ctx, "jobs:1", "secret-value-a", 10*time.Second))
	mustQueue(t, a.Do(ctx, "set", "jobs:2", "secret-value-a2", "nx", "px", 10000))
	exec := a.Do(ctx, "exec")
	if vals, err := exec.Slice(); err != nil || len(vals) != 2 || vals[0] != "OK" || vals[1] != "OK" {
		t.Fatalf("EXEC = %v %v, want [OK OK]", vals, err)
	}
	// Read before any give-up: the acquires are counted at EXEC's reply, not later.
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired after EXEC = %d, want 2", n)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 2 {
		t.Errorf("lock_held after EXEC = %v, want 2", got)
	}

	b := rdb.Conn()
	defer b.Close()
	mustQueue(t, b.Do(ctx, "multi"))
	mustQueue(t, b.Do(ctx, "set", "jobs:1", "secret-value-b", "nx", "px", 10000)) // A holds it
	if vals, err := b.Do(ctx, "exec").Slice(); err != nil || len(vals) != 1 || vals[0] != nil {
		t.Fatalf("EXEC = %v %v, want [nil]", vals, err)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired after B's EXEC = %d, want 2: B's refused SET NX counted as acquired", n)
	}
	wantAcquires(t, reg, 2, 1, 0)
	if got := value(t, reg, "lock_held", "jobs", ""); got != 2 {
		t.Errorf("lock_held = %v, want 2 (A's)", got)
	}
	// After EXEC the connection reads commands as any other: B's next acquire is its own.
	if ok, err := b.SetNX(ctx, "jobs:3", "secret-value-b3", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire after EXEC: %v %v", ok, err)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 3 {
		t.Errorf("acquired after B's plain SetNX = %d, want 3", n)
	}
}

// Renew and release scripts (EVALSHA) and a DEL queued on a Conn: a stale value's renew and
// release are refused inside the transaction (not owned), the holder's are not; its QUEUED
// answer read as a success would have counted every one of them ok and ended the hold at the
// stale release.
func TestRenewAndReleaseInAConnTransaction(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	release, refresh := redis.NewScript(testRelease), redis.NewScript(testRefresh)
	for _, s := range []*redis.Script{release, refresh} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"jobs:1", "jobs:2"} {
		if ok, err := rdb.SetNX(ctx, k, "secret-value-a", 10*time.Second).Result(); err != nil || !ok {
			t.Fatalf("acquire %s: %v %v", k, ok, err)
		}
	}
	conn := rdb.Conn()
	defer conn.Close()
	mustQueue(t, conn.Do(ctx, "multi"))
	mustQueue(t, refresh.EvalSha(ctx, conn, []string{"jobs:1"}, "secret-value-stale", 10000))
	mustQueue(t, refresh.EvalSha(ctx, conn, []string{"jobs:1"}, "secret-value-a", 10000))
	mustQueue(t, release.EvalSha(ctx, conn, []string{"jobs:1"}, "secret-value-stale"))
	mustQueue(t, conn.Do(ctx, "get", "jobs:1")) // not a lock command, but it takes a place in EXEC's reply
	if err := conn.Do(ctx, "exec").Err(); err != nil {
		t.Fatal(err)
	}
	checkJobs(t, reg,
		jobsValue{"lock_renewals_total", "ok", 1},
		jobsValue{"lock_renewals_total", "not_owned", 1},
		jobsValue{"lock_releases_total", "ok", 0},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_held", "", 2},
	)
	mustQueue(t, conn.Do(ctx, "multi"))
	mustQueue(t, conn.Do(ctx, "evalsha", release.Hash(), 1, "jobs:1", "secret-value-a"))
	mustQueue(t, conn.Do(ctx, "del", "jobs:2"))
	if err := conn.Do(ctx, "exec").Err(); err != nil {
		t.Fatal(err)
	}
	checkJobs(t, reg,
		jobsValue{"lock_releases_total", "ok", 1},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_held", "", 0},
	)
	if n, _ := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != 2 {
		t.Errorf("lock_held_seconds count = %d, want 2 (the release and the DEL)", n)
	}
}

// A Conn transaction that did not run counts nothing: DISCARD, and an EXEC that a WATCHed
// key's change aborted (nil), as TestAbortedTransactionCountsNothing for a TxPipeline. Neither
// a queued release, DEL or FLUSHDB ends the hold it would have ended.
func TestConnTransactionThatDidNotRunCountsNothing(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	if ok, err := rdb.SetNX(ctx, "jobs:held", "secret-value-held", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	conn := rdb.Conn()
	defer conn.Close()

	mustQueue(t, conn.Do(ctx, "multi"))
	mustQueue(t, conn.SetNX(ctx, "jobs:1", "secret-value-d", 10*time.Second))
	mustQueue(t, conn.Do(ctx, "set", "jobs:2", "secret-value-d", "nx", "px", 10000))
	mustQueue(t, conn.Do(ctx, "eval", testRelease, 1, "jobs:held", "secret-value-held"))
	mustQueue(t, conn.Do(ctx, "del", "jobs:held"))
	mustQueue(t, conn.Do(ctx, "flushdb"))
	if err := conn.Do(ctx, "discard").Err(); err != nil {
		t.Fatal(err)
	}

	if err := conn.Do(ctx, "watch", "jobs:watched").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "jobs:watched", "changed", 0).Err(); err != nil { // another connection
		t.Fatal(err)
	}
	mustQueue(t, conn.Do(ctx, "multi"))
	mustQueue(t, conn.SetNX(ctx, "jobs:3", "secret-value-w", 10*time.Second))
	mustQueue(t, conn.Do(ctx, "set", "jobs:4", "secret-value-w", "nx", "px", 10000))
	mustQueue(t, conn.Do(ctx, "eval", testRelease, 1, "jobs:held", "secret-value-held"))
	if err := conn.Do(ctx, "exec").Err(); err != redis.Nil {
		t.Fatalf("EXEC = %v, want nil (aborted)", err)
	}

	if n, err := rdb.Exists(ctx, "jobs:1", "jobs:2", "jobs:3", "jobs:4").Result(); err != nil || n != 0 {
		t.Fatalf("a SET of the transactions that did not run ran: %v %v", n, err)
	}
	wantAcquires(t, reg, 1, 0, 0) // the holder's, outside the transactions
	checkJobs(t, reg,
		jobsValue{"lock_held", "", 1},
		jobsValue{"lock_releases_total", "ok", 0},
		jobsValue{"lock_releases_total", "not_owned", 0},
	)
	if n, _ := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != 0 {
		t.Errorf("lock_held_seconds count = %d, want 0: the hold did not end", n)
	}
}

// A Conn transaction the server refused at EXEC (EXECABORT: a command of the block had an
// error when queued) counts each queued lock command's error, as a hand-made block in a
// pipeline does. One whose connection broke (go-redis cannot read QUEUED as an IntCmd's
// integer and drops the connection, and the server the block with it) counts nothing.
func TestConnTransactionRefusedOrBroken(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	conn := rdb.Conn()
	defer conn.Close()
	mustQueue(t, conn.Do(ctx, "multi"))
	mustQueue(t, conn.SetNX(ctx, "jobs:1", "secret-value-e", 10*time.Second))
	if err := conn.Do(ctx, "set", "jobs:bad").Err(); err == nil { // wrong arity: refused at once
		t.Fatal("a SET without a value was queued")
	}
	if err := conn.Do(ctx, "exec").Err(); err == nil {
		t.Fatal("EXEC ran a block with a refused command")
	}
	wantAcquires(t, reg, 0, 0, 1)

	broken := rdb.Conn()
	defer broken.Close()
	mustQueue(t, broken.Do(ctx, "multi"))
	mustQueue(t, broken.SetNX(ctx, "jobs:2", "secret-value-f", 10*time.Second))
	if err := broken.Del(ctx, "jobs:other").Err(); err == nil {
		t.Fatal("go-redis read QUEUED as DEL's integer")
	}
	_ = broken.Do(ctx, "exec").Err() // the Conn is in a bad state: not sent
	wantAcquires(t, reg, 0, 0, 1)
	if n, err := rdb.Exists(ctx, "jobs:1", "jobs:2").Result(); err != nil || n != 0 {
		t.Fatalf("a SET of the transactions that did not run ran: %v %v", n, err)
	}
}

// The same through the Tx of rdb.Watch, which is one connection too.
func TestTransactionOnAWatchTx(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		mustQueue(t, tx.Do(ctx, "multi"))
		mustQueue(t, tx.SetNX(ctx, "jobs:1", "secret-value-t", 10*time.Second))
		return tx.Do(ctx, "exec").Err()
	}, "jobs:watched")
	if err != nil {
		t.Fatal(err)
	}
	wantAcquires(t, reg, 1, 0, 0)
	if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
		t.Errorf("lock_held = %v, want 1", got)
	}
}

// A block's queued lock commands are kept up to maxQueuedInBlock; the ones past it pass
// uncounted, and the block's own are still read from their places in EXEC's reply.
func TestConnTransactionQueueIsBounded(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeConnTx(t, rdb)
	conn := rdb.Conn()
	defer conn.Close()
	mustQueue(t, conn.Do(ctx, "multi"))
	for i := range maxQueuedInBlock + 10 {
		mustQueue(t, conn.SetNX(ctx, "jobs:q:"+strconv.Itoa(i), "secret-value-q", 10*time.Second))
	}
	if err := conn.Do(ctx, "exec").Err(); err != nil {
		t.Fatal(err)
	}
	wantAcquires(t, reg, maxQueuedInBlock, 0, 0)
	if got := value(t, reg, "lock_held", "jobs", ""); got != maxQueuedInBlock {
		t.Errorf("lock_held = %v, want %d", got, maxQueuedInBlock)
	}
}

// A MULTI sent through a pooled client (which go-redis does not support: the client's next
// command may go to another of its connections, from another goroutine) opens no block in
// the hook, so its other commands are never held back for an EXEC. A queued command's QUEUED
// answer is still no outcome where the reply shows it (a Do); SetNX's QUEUED, read as false,
// cannot be told from a refusal. One connection here, so that the test is deterministic.
func TestMultiOnAPooledClientIsNotFollowed(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	reg := observeConnTx(t, rdb)
	mustQueue(t, rdb.Do(ctx, "multi"))
	mustQueue(t, rdb.Do(ctx, "set", "jobs:1", "secret-value-p", "nx", "px", 10000))
	if err := rdb.Do(ctx, "exec").Err(); err != nil {
		t.Fatal(err)
	}
	wantAcquires(t, reg, 0, 0, 0)
	if got := value(t, reg, "lock_held", "jobs", ""); got != 0 {
		t.Errorf("lock_held = %v, want 0", got)
	}
	if ok, err := rdb.SetNX(ctx, "jobs:2", "secret-value-p2", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 1 {
		t.Errorf("acquired = %d, want 1 (the plain SetNX)", n)
	}
}

// The hook's chain called outside go-redis (no Conn or Tx on the stack) opens no block either:
// a MULTI changes nothing for the commands after it.
func TestChainOutsideAConnFollowsNoBlock(t *testing.T) {
	ctx := context.Background()
	o, reg, _ := newTestObserver(t, Options{})
	process := o.Hook().ProcessHook(func(_ context.Context, cmd redis.Cmder) error {
		switch c := cmd.(type) {
		case *redis.BoolCmd:
			c.SetVal(true)
		case *redis.Cmd:
			c.SetVal("OK")
		}
		return nil
	})
	_ = process(ctx, redis.NewCmd(ctx, "multi"))
	_ = process(ctx, redis.NewBoolCmd(ctx, "set", "jobs:1", "secret-value-o", "px", int64(10000), "nx"))
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 1 {
		t.Errorf("acquired = %d, want 1: the SET was held back for an EXEC", n)
	}
}
