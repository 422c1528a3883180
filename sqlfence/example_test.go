package sqlfence_test

import (
	"context"
	"database/sql"
	"errors"
	"log"

	"github.com/lockwatch/lockwatch/lease"
	"github.com/lockwatch/lockwatch/sqlfence"
)

// The workflow-run pattern: the run's row is written only by the holder of the newest lease.
// The table needs a fence column:
//
//	ALTER TABLE workflow_runs ADD COLUMN fence_token bigint NOT NULL DEFAULT 0;
func Example() {
	var (
		ctx   context.Context
		db    *sql.DB          // any database/sql driver speaking PostgreSQL's $n placeholders
		runs  *lease.Namespace // declared with Policy{Fencing: true}
		runID string
	)
	guard, err := sqlfence.New(sqlfence.Table{Name: "workflow_runs", KeyColumn: "run_id", FenceColumn: "fence_token"},
		runs, "payload")
	if err != nil {
		log.Fatal(err)
	}
	err = runs.Do(ctx, "wf:run:lock:"+runID, func(ctx context.Context, fence int64) error {
		return guard.Update(ctx, db, fence, runID, "step done")
	})
	switch {
	case errors.Is(err, lease.ErrStaleFence):
		// A newer owner has written this run: this worker is stale. Stop; do not retry.
	case errors.Is(err, sqlfence.ErrNoRow):
		// No such run: create its row (fence_token 0) first.
	case err != nil:
		log.Print(err)
	}
}
