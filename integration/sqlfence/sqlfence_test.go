package sqlfence_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/integration/internal/pgtest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
	"github.com/lockwatch/lockwatch/sqlfence"
)

// recordingNamespace is a real lease namespace whose metrics land in reg. The guard only calls
// RecordFencedWrite on it, so its Redis client is never dialled.
func recordingNamespace(t *testing.T, reg *prometheus.Registry) *lease.Namespace {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := lease.New(rdb, lease.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.Declare("runs", lease.Policy{Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestGuardUpdate(t *testing.T) {
	db := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A table name with a quote and a space proves the identifiers are quoted, not pasted.
	mustExec(t, ctx, db, `CREATE TABLE "run ""log""" (run_id text PRIMARY KEY, payload text NOT NULL, fence_token bigint NOT NULL DEFAULT 0)`)
	mustExec(t, ctx, db, `INSERT INTO "run ""log""" (run_id, payload) VALUES ('r1', 'initial')`)

	reg := prometheus.NewRegistry()
	g, err := sqlfence.New(sqlfence.Table{Name: `run "log"`, KeyColumn: "run_id", FenceColumn: "fence_token"},
		recordingNamespace(t, reg), "payload")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		fence   int64
		key     string
		payload string
		wantErr error // nil: applied
		// wantRow is the row's payload and fence after the step.
		wantPayload string
		wantFence   int64
	}{
		{"first write", 10, "r1", "a", nil, "a", 10},
		{"same lease writes again", 10, "r1", "b", nil, "b", 10},
		{"newer lease", 20, "r1", "c", nil, "c", 20},
		{"stale lease", 10, "r1", "stale", lease.ErrStaleFence, "c", 20},
		{"stale by one", 19, "r1", "stale", lease.ErrStaleFence, "c", 20},
		{"no such row", 30, "r2", "x", sqlfence.ErrNoRow, "c", 20},
		{"fencing off", 0, "r1", "x", lease.ErrNoFence, "c", 20},
	}
	for _, st := range steps {
		err := g.Update(ctx, db, st.fence, st.key, st.payload)
		if st.wantErr == nil && err != nil || st.wantErr != nil && !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: Update = %v, want %v", st.name, err, st.wantErr)
		}
		var payload string
		var fence int64
		if err := db.QueryRowContext(ctx, `SELECT payload, fence_token FROM "run ""log""" WHERE run_id = 'r1'`).Scan(&payload, &fence); err != nil {
			t.Fatal(err)
		}
		if payload != st.wantPayload || fence != st.wantFence {
			t.Fatalf("%s: row = (%q, %d), want (%q, %d)", st.name, payload, fence, st.wantPayload, st.wantFence)
		}
	}
	// Applied: the first three steps. Rejected: the two stale ones; a missing row and a
	// missing fence are errors of the caller, not fenced writes.
	for outcome, want := range map[string]float64{"applied": 3, "rejected": 2} {
		if got := testkit.MetricValue(t, reg, "lock_fenced_writes_total", "lock_namespace", "runs", "outcome", outcome); got != want {
			t.Errorf("lock_fenced_writes_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

// TestGuardInTransaction: the guard joins the caller's transaction, so a guarded write and
// the writes that depend on it commit or roll back together.
func TestGuardInTransaction(t *testing.T) {
	db := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mustExec(t, ctx, db, `CREATE SCHEMA app`)
	mustExec(t, ctx, db, `CREATE TABLE app.runs (id bigint PRIMARY KEY, state text, attempts int, fence bigint NOT NULL DEFAULT 0)`)
	mustExec(t, ctx, db, `INSERT INTO app.runs (id, state, attempts) VALUES (7, 'queued', 0)`)
	g, err := sqlfence.New(sqlfence.Table{Name: "app.runs", KeyColumn: "id", FenceColumn: "fence"}, nil, "state", "attempts")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(ctx, tx, 5, 7, "running", 1); err != nil {
		t.Fatalf("Update in a transaction: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var state string
	var fence int64
	if err := db.QueryRowContext(ctx, `SELECT state, fence FROM app.runs WHERE id = 7`).Scan(&state, &fence); err != nil {
		t.Fatal(err)
	}
	if state != "queued" || fence != 0 {
		t.Fatalf("after rollback: (%q, %d), want the row untouched", state, fence)
	}
	if err := g.Update(ctx, db, 5, 7, "running"); err == nil {
		t.Fatal("Update with fewer values than columns succeeded")
	}
}

// TestGuardClaim: the new holder's claim refuses an older lease's write before the new holder
// has written the row (without it, that write lands and a read-modify-write loses an update).
func TestGuardClaim(t *testing.T) {
	db := pgtest.Start(t).DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mustExec(t, ctx, db, `CREATE TABLE runs (run_id text PRIMARY KEY, counter bigint NOT NULL DEFAULT 0, fence_token bigint NOT NULL DEFAULT 0)`)
	mustExec(t, ctx, db, `INSERT INTO runs (run_id) VALUES ('r1'), ('r2')`)
	reg := prometheus.NewRegistry()
	g, err := sqlfence.New(sqlfence.Table{Name: "runs", KeyColumn: "run_id", FenceColumn: "fence_token"}, recordingNamespace(t, reg), "counter")
	if err != nil {
		t.Fatal(err)
	}
	row := func(key string) (counter, fence int64) {
		t.Helper()
		if err := db.QueryRowContext(ctx, `SELECT counter, fence_token FROM runs WHERE run_id = $1`, key).Scan(&counter, &fence); err != nil {
			t.Fatal(err)
		}
		return counter, fence
	}
	// A (fence 10) claims and writes; B (fence 20) takes over and claims both rows.
	if err := g.Claim(ctx, db, 10, "r1", "r2"); err != nil {
		t.Fatal(err)
	}
	if err := g.Update(ctx, db, 10, "r1", 1); err != nil {
		t.Fatal(err)
	}
	if err := g.Claim(ctx, db, 20, "r1", "r2"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"r1", "r2"} {
		if err := g.Update(ctx, db, 10, key, 99); !errors.Is(err, lease.ErrStaleFence) {
			t.Errorf("A's write to %s after B's claim = %v, want ErrStaleFence", key, err)
		}
		if _, fence := row(key); fence != 20 {
			t.Errorf("%s fence = %d after the claim, want 20", key, fence)
		}
	}
	if counter, _ := row("r1"); counter != 1 {
		t.Errorf("r1 counter = %d, want A's applied 1 kept and its stale 99 refused", counter)
	}
	if err := g.Claim(ctx, tx(t, ctx, db), 15, "r1"); !errors.Is(err, lease.ErrStaleFence) {
		t.Errorf("older claim = %v, want ErrStaleFence", err)
	}
	if err := g.Claim(ctx, db, 20, "r1"); err != nil {
		t.Errorf("repeated claim: %v", err)
	}
	if err := g.Update(ctx, db, 20, "r1", 2); err != nil {
		t.Errorf("B's own write: %v", err)
	}
	if err := g.Claim(ctx, db, 30, "r1", "missing"); !errors.Is(err, sqlfence.ErrNoRow) {
		t.Errorf("claim of a missing row = %v, want ErrNoRow", err)
	}
	if err := g.Claim(ctx, db, 0, "r1"); !errors.Is(err, lease.ErrNoFence) {
		t.Errorf("claim with fence 0 = %v, want ErrNoFence", err)
	}
	// Writes only: A's 1, B's 2 applied; A's two stale writes rejected.
	for outcome, want := range map[string]float64{"applied": 2, "rejected": 2} {
		if got := testkit.MetricValue(t, reg, "lock_fenced_writes_total", "lock_namespace", "runs", "outcome", outcome); got != want {
			t.Errorf("lock_fenced_writes_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	want := `UPDATE "runs" SET "fence_token" = $1 WHERE "run_id" = $2 AND "fence_token" <= $1`
	if got := g.ClaimSQL(); got != want {
		t.Errorf("ClaimSQL() = %s, want %s", got, want)
	}
}

// tx is a transaction rolled back at the end of the test.
func tx(t *testing.T, ctx context.Context, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func TestNewRejectsEmptyNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		table   sqlfence.Table
		columns []string
	}{
		{"no table", sqlfence.Table{KeyColumn: "id", FenceColumn: "f"}, []string{"v"}},
		{"no key column", sqlfence.Table{Name: "t", FenceColumn: "f"}, []string{"v"}},
		{"no fence column", sqlfence.Table{Name: "t", KeyColumn: "id"}, []string{"v"}},
		{"no columns", sqlfence.Table{Name: "t", KeyColumn: "id", FenceColumn: "f"}, nil},
		{"blank column", sqlfence.Table{Name: "t", KeyColumn: "id", FenceColumn: "f"}, []string{" "}},
	} {
		if _, err := sqlfence.New(tc.table, nil, tc.columns...); !errors.Is(err, sqlfence.ErrInvalidTable) {
			t.Errorf("%s: New = %v, want ErrInvalidTable", tc.name, err)
		}
	}
}

func TestGuardSQL(t *testing.T) {
	g, err := sqlfence.New(sqlfence.Table{Name: "app.runs", KeyColumn: "run_id", FenceColumn: "fence_token"}, nil, "payload", "updated_at")
	if err != nil {
		t.Fatal(err)
	}
	want := `UPDATE "app"."runs" SET "payload" = $1, "updated_at" = $2, "fence_token" = $3 WHERE "run_id" = $4 AND "fence_token" <= $3`
	if got := g.SQL(); got != want {
		t.Errorf("SQL() =\n%s\nwant\n%s", got, want)
	}
}

func mustExec(t *testing.T, ctx context.Context, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.ExecContext(ctx, query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
