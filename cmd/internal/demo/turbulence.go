package demo

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockwatch/lockwatch/lease"
)

// legacyValue is what the legacy cron script writes into its lock key (a host name, as such
// scripts do), without an expiry.
const legacyValue = "cron-host-3"

// turbulenceLoop injects the seeds' failure modes every TurbulencePeriod while turbulence is
// on. Each fault is driven to a deterministic outcome, so one cycle always shows every signal:
// abandonments (scheduler, snapshot), failed and not-owned renews (workflow), a not-owned
// release (approval), a rejected fenced write (snapshot) and a lock without expiry (reconciler).
func (w *Workload) turbulenceLoop(ctx context.Context) {
	// Let every worker take its first leases before anything breaks.
	warmUp := 2 * time.Second
	for ctx.Err() == nil {
		on := w.turbulence.Load()
		w.setLegacyLock(ctx, on)
		if !on {
			sleep(ctx, time.Second)
			continue
		}
		if !sleep(ctx, warmUp) {
			return
		}
		warmUp = 0
		cycle := time.Now()
		w.injectFaults(ctx)
		sleep(ctx, w.opts.TurbulencePeriod-time.Since(cycle))
	}
}

// injectFaults runs one cycle of faults, each from its offset into the cycle, and returns when
// all have played out.
func (w *Workload) injectFaults(ctx context.Context) {
	var wg sync.WaitGroup
	for _, fault := range []struct {
		after time.Duration
		run   func(context.Context)
	}{
		{0, w.partitionScheduler},
		{time.Second, w.staleApproval},
		{2 * time.Second, w.slowWorkflow},
		{4 * time.Second, w.freezeSnapshot},
	} {
		wg.Go(func() {
			if sleep(ctx, fault.after) {
				fault.run(ctx)
			}
		})
	}
	wg.Wait()
}

// setLegacyLock makes the legacy cron script's lock exist (a plain SET without expiry, as a
// hand-rolled lock that forgot its TTL does) or, when turbulence is off, deletes it as the
// runbook's fix does.
func (w *Workload) setLegacyLock(ctx context.Context, present bool) {
	key := w.opts.Prefix + "reconciler:legacy-cron"
	if present {
		_ = w.admin.SetNX(ctx, key, legacyValue, 0).Err()
		return
	}
	_ = w.admin.Del(ctx, key).Err()
}

// partitionScheduler cuts scheduler-b off from Redis while it runs a long job: its renews
// fail, and the Abandon policy abandons the lease at its lapse (ValidUntil, just before the 6s
// TTL), after two failed renews, before MaxRenewFailures' third: the job's context is
// cancelled and the release skipped.
func (w *Workload) partitionScheduler(ctx context.Context) {
	r := w.replicas["scheduler-b"]
	l, err := r.locks["scheduler"].Acquire(ctx, w.opts.Prefix+"scheduler:job:nightly-report")
	if err != nil {
		return
	}
	defer l.Release(ctx)
	sleep(ctx, 500*time.Millisecond)
	r.link.setPartition(true)
	defer r.link.setPartition(false)
	// The renews at 2s and 4s fail; the lease is abandoned at its lapse, at about 6s.
	_ = work(l.Context(), 8*time.Second)
	sleep(ctx, 500*time.Millisecond)
}

// staleApproval lets a slow approver (approval-a, no renewal) outlive its 2s TTL; approval-b
// takes the expired lock, and approval-a's release finds it not owned: the stale release the
// compare-and-delete script exists to refuse.
func (w *Workload) staleApproval(ctx context.Context) {
	key := w.opts.Prefix + "approval:request:escalation"
	slow, err := w.replicas["approval-a"].locks["approval"].Acquire(ctx, key)
	if err != nil {
		return
	}
	sleep(ctx, 2500*time.Millisecond)
	next, err := w.replicas["approval-b"].locks["approval"].Acquire(ctx, key)
	_ = slow.Release(ctx) // not owned
	if err == nil {
		sleep(ctx, 200*time.Millisecond)
		_ = next.Release(ctx)
	}
}

// slowWorkflow slows workflow-a's network past its renew timeout while it holds a long run:
// its renews fail, the warn-and-continue policy keeps working, the lease expires and
// workflow-b takes the run. When the network recovers, workflow-a's renew and release both find
// the lock not owned.
func (w *Workload) slowWorkflow(ctx context.Context) {
	a, b := w.replicas["workflow-a"], w.replicas["workflow-b"]
	key := w.opts.Prefix + "workflow:run:long"
	l, err := a.locks["workflow"].Acquire(ctx, key)
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { b.takeOverWorkflow(ctx, key) })
	sleep(ctx, 500*time.Millisecond)
	a.link.setLatency(400 * time.Millisecond)
	sleep(ctx, 5*time.Second)
	a.link.setLatency(0)
	// The next renew (every second) is answered "not owned".
	sleep(ctx, 1500*time.Millisecond)
	_ = l.Release(ctx)
	wg.Wait()
}

// takeOverWorkflow is workflow-b wanting the run at key: it keeps asking for up to 6s, until
// the lease expired under workflow-a frees it, and then works it.
func (r *replica) takeOverWorkflow(ctx context.Context, key string) {
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		next, err := r.locks["workflow"].Acquire(ctx, key)
		if err == nil {
			_ = work(next.Context(), 4*time.Second)
			_ = next.Release(ctx)
			return
		}
		if !errors.Is(err, lease.ErrBusy) {
			sleep(ctx, idle) // Redis unreachable: do not spin
		}
	}
}

// freezeSnapshot freezes snapshot-b for 5s (more than twice its 2s TTL) inside its next
// critical section: its renewer is stuck too, so the lease is abandoned, snapshot-a takes over
// with a newer fence, and snapshot-b's late write is rejected.
func (w *Workload) freezeSnapshot(context.Context) {
	w.replicas["snapshot-b"].freezeNext.Store(int64(5 * time.Second))
}
