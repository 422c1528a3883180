package demo

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/lockwatch/lockwatch/lease"
)

// idle is the pause after a failed attempt, so a dead Redis does not spin the workers.
const idle = 250 * time.Millisecond

// runWorkers runs every worker, each on its replica, the processes of the services that lock
// with other languages' clients, and the turbulence until ctx ends. Some replicas run a
// pattern's worker twice: goroutines of one process competing for its leases.
func (w *Workload) runWorkers(ctx context.Context) {
	var wg sync.WaitGroup
	for _, team := range []struct {
		worker   func(r *replica, prefix string) func(context.Context)
		replicas []string
	}{
		{(*replica).schedulerWorker, []string{"scheduler-a", "scheduler-b"}},
		{(*replica).workflowWorker, []string{"workflow-a", "workflow-a", "workflow-b"}},
		{(*replica).approvalWorker, []string{"approval-a", "approval-a", "approval-b", "approval-b"}},
		{(*replica).reconcilerWorker, []string{"reconciler-a", "reconciler-b"}},
		{(*replica).snapshotWorker, []string{"snapshot-a", "snapshot-b"}},
	} {
		for _, name := range team.replicas {
			run := team.worker(w.replicas[name], w.opts.Prefix)
			wg.Go(func() { run(ctx) })
		}
	}
	for _, o := range w.others {
		wg.Go(func() { o.run(ctx) })
	}
	wg.Go(func() { w.turbulenceLoop(ctx) })
	wg.Wait()
}

// work pretends to work for d, stopping early when the lease's context ends (released,
// abandoned): what a well-behaved holder does.
func work(ctx context.Context, d time.Duration) error {
	if !sleep(ctx, d) {
		return context.Cause(ctx)
	}
	return nil
}

// schedulerWorker runs jobs, each under a fenced lease for its whole run (seed: scheduler job
// lock). Two replicas pick from the same six jobs, so some picks find the job taken.
func (r *replica) schedulerWorker(prefix string) func(context.Context) {
	ns := r.locks["scheduler"]
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			key := prefix + "scheduler:job:" + strconv.Itoa(1+randN(6))
			l, err := ns.TryAcquire(ctx, key)
			if err == nil {
				_ = work(l.Context(), between(time.Second, 4*time.Second))
				_ = l.Release(ctx)
			}
			sleep(ctx, idle)
		}
	}
}

// workflowWorker advances workflow runs under warn-and-continue leases (seed: workflow run
// lock with an in-process mutex): goroutines of one replica queue on the local mutex, the other
// replica competes in Redis.
func (r *replica) workflowWorker(prefix string) func(context.Context) {
	ns := r.locks["workflow"]
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			key := prefix + "workflow:run:" + strconv.Itoa(1+randN(3))
			if l, err := ns.Acquire(ctx, key); err == nil {
				_ = work(l.Context(), between(500*time.Millisecond, 2*time.Second))
				_ = l.Release(ctx)
			}
			sleep(ctx, idle)
		}
	}
}

// approvalWorker grants approvals under short unrenewed leases with a tight acquire deadline
// (seed: approval lock). Four approvers on three requests make contention; one approval in ten
// is slow enough that waiters give up busy.
func (r *replica) approvalWorker(prefix string) func(context.Context) {
	ns := r.locks["approval"]
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			key := prefix + "approval:request:" + strconv.Itoa(1+randN(3))
			if l, err := ns.Acquire(ctx, key); err == nil {
				hold := between(20*time.Millisecond, 200*time.Millisecond)
				if randN(10) == 0 {
					hold = between(600*time.Millisecond, time.Second)
				}
				_ = work(l.Context(), hold)
				_ = l.Release(ctx)
			}
			sleep(ctx, between(50*time.Millisecond, 300*time.Millisecond))
		}
	}
}

// reconcilerWorker runs one reconcile loop every poll interval under a lease it never releases
// (seed: reconciler, TTL = 2 x poll): the replica that finds the key expired takes the cycle.
func (r *replica) reconcilerWorker(prefix string) func(context.Context) {
	ns := r.locks["reconciler"]
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			if l, err := ns.TryAcquire(ctx, prefix+"reconciler:loop"); err == nil {
				_ = work(l.Context(), between(200*time.Millisecond, 800*time.Millisecond))
				_ = l.Release(ctx) // HoldUntilExpiry: counted as skipped, the key stays
			}
			sleep(ctx, 3*time.Second)
		}
	}
}

// snapshotWriter writes the shared snapshot every second through the fencing guard (seed:
// snapshot writer). When the replica is frozen (freezeNext), the freeze happens between
// computing the snapshot and writing it: the write then goes out with the old fence, exactly
// what a process resumed after a long GC pause does, and the guard must refuse it.
func (r *replica) snapshotWorker(prefix string) func(context.Context) {
	ns := r.locks["snapshot"]
	lockKey := prefix + "snapshot:writer"
	dataKey := "{" + lockKey + "}:data" // beside the lock, in its cluster slot
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			_ = ns.Do(ctx, lockKey, func(lctx context.Context, fence int64) error {
				if err := work(lctx, between(50*time.Millisecond, 200*time.Millisecond)); err != nil {
					return err
				}
				if d := time.Duration(r.freezeNext.Swap(0)); d > 0 {
					r.link.pause()
					sleep(ctx, d)
					r.link.resume()
				}
				// A frozen process does not look at its context before the write it was
				// about to make; only the storage's fence check can stop it.
				wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				defer cancel()
				err := ns.FencedSet(wctx, lockKey, fence, dataKey, "snapshot by "+r.name, time.Minute)
				if errors.Is(err, lease.ErrStaleFence) {
					return nil
				}
				return err
			})
			sleep(ctx, time.Second)
		}
	}
}
