// Package sqlfence is the fencing guard for SQL stores: an UPDATE that lands only while the
// row's fence column is not newer than the writer's lease fence, so that a holder paused past
// its TTL cannot overwrite what a newer owner wrote.
//
// The guard is one statement; the database enforces it, not the client:
//
//	UPDATE "runs" SET "payload" = $1, "fence_token" = $2 WHERE "run_id" = $3 AND "fence_token" <= $2
//
// A guarded row's fence rises when a new holder writes it, so a stale holder could still write
// between the new holder's acquisition and its first write. The new holder closes that window
// by claiming its rows right after acquiring, before reading them (Guard.Claim):
//
//	UPDATE "runs" SET "fence_token" = $1 WHERE "run_id" = $2 AND "fence_token" <= $1
//
// From then on every older fence is refused.
//
// No row updated means either a newer lease has written the row (the caller is stale: stop,
// do not retry) or there is no such row; the guard tells the two apart with one more query, on
// the rejected path only. A stale write returns an error matching lease.ErrStaleFence, and both
// outcomes are counted in lock_fenced_writes_total when a Recorder (a *lease.Namespace) is
// given.
//
// The package uses database/sql only; statements use PostgreSQL's $n placeholders (also
// understood by CockroachDB and SQLite). Fence columns are bigint NOT NULL DEFAULT 0.
package sqlfence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lockwatch/lockwatch/lease"
)

// ErrNoRow: the guarded update found no row with the given key (nothing to fence against;
// insert the row first, with fence 0).
var ErrNoRow = errors.New("sqlfence: no row with that key")

// ErrInvalidTable: a Table or column name is empty.
var ErrInvalidTable = errors.New("sqlfence: invalid table description")

// Recorder counts guarded writes. *lease.Namespace implements it, counting in the namespace's
// lock_fenced_writes_total{outcome="applied"|"rejected"}.
type Recorder interface {
	RecordFencedWrite(applied bool)
}

// Execer is what the guard runs on: *sql.DB, *sql.Tx and *sql.Conn all qualify, so a guarded
// write can join the caller's transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Table names a table whose rows are guarded by a fence column. Names are quoted as SQL
// identifiers (a dot separates a schema: "app.runs").
type Table struct {
	Name        string
	KeyColumn   string
	FenceColumn string
}

// Guard is a prepared guarded UPDATE of some columns of one table. It is immutable and safe
// for concurrent use.
type Guard struct {
	table    Table
	columns  []string
	recorder Recorder
	update   string
	claim    string
	exists   string
}

// New returns the guard that updates columns of t. rec, which may be nil, counts the writes.
func New(t Table, rec Recorder, columns ...string) (*Guard, error) {
	for _, name := range append([]string{t.Name, t.KeyColumn, t.FenceColumn}, columns...) {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%w: table %q, key column %q, fence column %q, columns %q: names must be non-empty",
				ErrInvalidTable, t.Name, t.KeyColumn, t.FenceColumn, columns)
		}
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("%w: no columns to update", ErrInvalidTable)
	}
	g := &Guard{table: t, columns: append([]string(nil), columns...), recorder: rec}
	g.update = g.updateSQL()
	g.claim = fmt.Sprintf("UPDATE %[1]s SET %[2]s = $1 WHERE %[3]s = $2 AND %[2]s <= $1",
		quoteName(t.Name), quoteIdent(t.FenceColumn), quoteIdent(t.KeyColumn))
	g.exists = fmt.Sprintf("SELECT 1 FROM %s WHERE %s = $1", quoteName(t.Name), quoteIdent(t.KeyColumn))
	return g, nil
}

// updateSQL: the values are $1…$n, the fence $n+1 and the key $n+2. The fence comparison is
// "not newer than", so one lease may write a row several times; two leases never share a
// fence.
func (g *Guard) updateSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "UPDATE %s SET ", quoteName(g.table.Name))
	for i, c := range g.columns {
		fmt.Fprintf(&b, "%s = $%d, ", quoteIdent(c), i+1)
	}
	fence, key := len(g.columns)+1, len(g.columns)+2
	fc := quoteIdent(g.table.FenceColumn)
	fmt.Fprintf(&b, "%s = $%d WHERE %s = $%d AND %s <= $%d", fc, fence, quoteIdent(g.table.KeyColumn), key, fc, fence)
	return b.String()
}

// SQL returns the guarded UPDATE statement, for logs and review.
func (g *Guard) SQL() string { return g.update }

// Update sets the guard's columns of the row key to values (one per column, in order) and its
// fence column to fence, unless the row already holds a newer fence. It returns an error
// matching lease.ErrStaleFence when a newer lease has written the row, ErrNoRow when there is
// no such row, and lease.ErrNoFence when fence is not positive (fencing off). Applied and
// stale writes are counted by the guard's Recorder; failed statements and missing rows are not.
func (g *Guard) Update(ctx context.Context, db Execer, fence int64, key any, values ...any) error {
	if fence <= 0 {
		return lease.ErrNoFence
	}
	if len(values) != len(g.columns) {
		return fmt.Errorf("sqlfence: update %s: %d values for %d columns", g.table.Name, len(values), len(g.columns))
	}
	args := make([]any, 0, len(values)+2)
	args = append(append(args, values...), fence, key)
	res, err := db.ExecContext(ctx, g.update, args...)
	if err != nil {
		return fmt.Errorf("sqlfence: update %s: %w", g.table.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlfence: update %s: rows affected: %w", g.table.Name, err)
	}
	if n > 0 {
		g.record(true)
		return nil
	}
	return g.rejected(ctx, db, fence, key)
}

// Claim raises the fence column of each row keys names to fence, unless a row already holds a
// newer fence, so that from its return on every older lease's Update is refused. Call it right
// after acquiring the lease and before reading the rows, in the caller's transaction or on its
// own (a claim that is not committed protects nothing until it is). It returns an error matching
// lease.ErrStaleFence, naming the row, when a newer lease has claimed or written one (the
// caller is stale: stop), ErrNoRow when a row does not exist, and lease.ErrNoFence when fence
// is not positive. Rows are claimed one statement each, in order; claiming again with the same
// fence is harmless. Claims are not counted as writes.
func (g *Guard) Claim(ctx context.Context, db Execer, fence int64, keys ...any) error {
	if fence <= 0 {
		return lease.ErrNoFence
	}
	for _, key := range keys {
		res, err := db.ExecContext(ctx, g.claim, fence, key)
		if err != nil {
			return fmt.Errorf("sqlfence: claim %s: %w", g.table.Name, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlfence: claim %s: rows affected: %w", g.table.Name, err)
		}
		if n == 0 {
			if err := g.missing(ctx, db, key); err != nil {
				return err
			}
			return fmt.Errorf("%w: claim of table %s, key %v, fence %d", lease.ErrStaleFence, g.table.Name, key, fence)
		}
	}
	return nil
}

// ClaimSQL returns the claim statement, for logs and review.
func (g *Guard) ClaimSQL() string { return g.claim }

// missing returns ErrNoRow when there is no row key, nil when there is one.
func (g *Guard) missing(ctx context.Context, db Execer, key any) error {
	var one int
	err := db.QueryRowContext(ctx, g.exists, key).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: table %s, key %v", ErrNoRow, g.table.Name, key)
	case err != nil:
		return fmt.Errorf("sqlfence: %s: check the row after 0 rows updated: %w", g.table.Name, err)
	}
	return nil
}

// rejected tells a stale writer from a missing row.
func (g *Guard) rejected(ctx context.Context, db Execer, fence int64, key any) error {
	if err := g.missing(ctx, db, key); err != nil {
		return err
	}
	g.record(false)
	return fmt.Errorf("%w: table %s, key %v, fence %d", lease.ErrStaleFence, g.table.Name, key, fence)
}

func (g *Guard) record(applied bool) {
	if g.recorder != nil {
		g.recorder.RecordFencedWrite(applied)
	}
}

// quoteName quotes a possibly schema-qualified name part by part.
func quoteName(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// quoteIdent quotes an SQL identifier, doubling embedded quotes, so that no name can change
// the statement.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
