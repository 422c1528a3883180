package drills

import (
	"errors"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/integration/internal/pgtest"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
	"github.com/lockwatch/lockwatch/sqlfence"
)

// TestPausedWorkerSQL is the paused-worker drill with the storage boundary in a real
// PostgreSQL: worker A holds a fenced lease, writes its run's row through the SQL guard and
// then stops (its link to Redis dead) past its TTL. B acquires and writes. When A resumes, its
// guarded UPDATE affects no row and is reported as a stale fence; B's row stays; and each
// worker's lock_fenced_writes_total counts what happened to its writes.
func TestPausedWorkerSQL(t *testing.T) {
	const ttl = 600 * time.Millisecond
	srv := redistest.Start(t)
	pg := pgtest.Start(t)
	a := newAudit(t)
	defer checkLeaks(t)()
	db := pg.DB(t)
	defer db.Close() // before the leak check: the pool's goroutines end with it
	ctx := ctxFor(t, 60*time.Second)
	if _, err := db.ExecContext(ctx, `CREATE TABLE workflow_runs (run_id text PRIMARY KEY, payload text NOT NULL, fence_token bigint NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO workflow_runs (run_id, payload) VALUES ('run-1', 'queued')`); err != nil {
		t.Fatal(err)
	}
	runs := sqlfence.Table{Name: "workflow_runs", KeyColumn: "run_id", FenceColumn: "fence_token"}

	wa := newWorker(t, a, "A", srv.Addr, true)
	wb := newWorker(t, a, "B", srv.Addr, false)
	defer wa.close()
	defer wb.close()
	policy := lease.Policy{TTL: ttl, RenewInterval: 150 * time.Millisecond, RenewTimeout: 100 * time.Millisecond,
		MaxRenewFailures: 3, OnRenewFailure: lease.Abandon, Fencing: true}
	na, nb := wa.namespace(t, "runs", policy), wb.namespace(t, "runs", policy)
	guardA, err := sqlfence.New(runs, na, "payload")
	if err != nil {
		t.Fatal(err)
	}
	guardB, err := sqlfence.New(runs, nb, "payload")
	if err != nil {
		t.Fatal(err)
	}
	key := uniqueKey(t, "run-lock")

	la, err := na.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("A: acquire: %v", err)
	}
	a.learn(t, wb.rdb, key)
	if err := guardA.Update(ctx, db, la.Fence(), "run-1", "step 1 by A"); err != nil {
		t.Fatalf("A: first write: %v", err)
	}

	// The pause: A's renewals fail until its lease expires and B takes the lock.
	wa.proxy.Blackhole()
	testkit.Eventually(t, 5*time.Second, "A's lease to expire in Redis", func() bool {
		return wb.rdb.Exists(ctx, key).Val() == 0
	})
	lb, err := nb.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("B: acquire after A's lease expired: %v", err)
	}
	a.learn(t, wb.rdb, key)
	if lb.Fence() <= la.Fence() {
		t.Fatalf("B's fence %d is not newer than A's %d", lb.Fence(), la.Fence())
	}
	if err := guardB.Update(ctx, db, lb.Fence(), "run-1", "step 2 by B"); err != nil {
		t.Fatalf("B: write: %v", err)
	}

	// A resumes and writes, as a worker that never noticed its pause would.
	wa.proxy.Heal()
	res, err := db.ExecContext(ctx, guardA.SQL(), "raw stale write by A", la.Fence(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 0 {
		t.Fatalf("A's guarded UPDATE after the pause affected %d rows, want 0", n)
	}
	staleErr := guardA.Update(ctx, db, la.Fence(), "run-1", "stale write by A")
	a.err("A's stale write error", staleErr)
	if !errors.Is(staleErr, lease.ErrStaleFence) {
		t.Fatalf("A: write after the pause = %v, want ErrStaleFence", staleErr)
	}
	var payload string
	var fence int64
	if err := db.QueryRowContext(ctx, `SELECT payload, fence_token FROM workflow_runs WHERE run_id = 'run-1'`).Scan(&payload, &fence); err != nil {
		t.Fatal(err)
	}
	if payload != "step 2 by B" || fence != lb.Fence() {
		t.Errorf("row = (%q, fence %d) after A resumed, want B's write with fence %d", payload, fence, lb.Fence())
	}
	if err := guardB.Update(ctx, db, lb.Fence(), "run-1", "step 3 by B"); err != nil {
		t.Errorf("B: write after A resumed: %v", err)
	}
	if err := la.Release(ctx); !errors.Is(err, lease.ErrAbandoned) {
		t.Errorf("A: release after the pause = %v, want ErrAbandoned", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Errorf("B: release: %v", err)
	}

	wantMetrics(t, "A", wa.reg, "runs", map[string]bound{
		"lock_fenced_writes_total/applied":  eq(1),
		"lock_fenced_writes_total/rejected": eq(1),
		"lock_abandoned_total":              eq(1),
	})
	wantMetrics(t, "B", wb.reg, "runs", map[string]bound{
		"lock_fenced_writes_total/applied":  eq(2),
		"lock_fenced_writes_total/rejected": eq(0),
	})
}
