package lease_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockwatch/lockwatch/lease"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// exampleRedis stands in for the application's client, which would be
// redis.NewClient(&redis.Options{Addr: …, ContextTimeoutEnabled: true}). It uses a database of
// the test server that it empties first, so every run of an example starts from the same state.
func exampleRedis() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: lease.SharedRedisAddr(), DB: 1, ContextTimeoutEnabled: true})
	rdb.FlushDB(context.Background())
	return rdb
}

// declare is what an application does once at start-up: lease.New over its Redis client, then
// one Declare per kind of lock. Each example gets a registry of its own so that their metrics
// do not collide.
func declare(rdb *redis.Client, name string, policy lease.Policy) (*lease.Namespace, error) {
	locks, err := lease.New(rdb, lease.Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		return nil, err
	}
	return locks.Declare(name, policy)
}

// Scheduler job: strict fencing. TTL 60s, renew every TTL/3 under a 2s timeout, abandon after 3
// consecutive failed renews or at the lease's lapse, whichever comes first (with renews 20s
// apart the lapse does: after 2, since a third would start past it); the job's context is then
// cancelled with cause ErrAbandoned and release is skipped.
func ExampleNamespace_Do_scheduler() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	jobs, err := declare(rdb, "scheduler", lease.Policy{
		TTL:              60 * time.Second,
		RenewTimeout:     2 * time.Second,
		MaxRenewFailures: 3,
		OnRenewFailure:   lease.Abandon,
		Fencing:          true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := jobs.Policy()
	fmt.Printf("ttl %s, renew every %s, abandon after %d failed renews or at the lapse\n", p.TTL, p.RenewInterval, p.MaxRenewFailures)

	err = jobs.Do(ctx, "scheduler:job:42", func(ctx context.Context, fence int64) error {
		// Stamp every write of the job with fence; stop when ctx is done.
		fmt.Println("job 42 runs with a fence:", fence > 0)
		return nil
	})
	switch {
	case errors.Is(err, lease.ErrAbandoned):
		fmt.Println("lease lost mid-job; the next owner redoes it")
	case err != nil:
		fmt.Println("job failed:", err)
	default:
		fmt.Println("job 42 done")
	}
	// Output:
	// ttl 1m0s, renew every 20s, abandon after 3 failed renews or at the lapse
	// job 42 runs with a fence: true
	// job 42 done
}

// Workflow run: continuity first. TTL 30s renewed every 10s; a failed renew is logged and counted
// but the run keeps going; an in-process mutex queues the replica's own goroutines before Redis.
func ExampleNamespace_Do_workflow() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	runs, err := declare(rdb, "workflow", lease.Policy{
		TTL:            30 * time.Second,
		OnRenewFailure: lease.Continue,
		LocalMutex:     true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := runs.Policy()
	fmt.Printf("ttl %s, renew every %s, on renew failure: %s\n", p.TTL, p.RenewInterval, p.OnRenewFailure)

	err = runs.Do(ctx, "wf:run:lock:run-7", func(ctx context.Context, _ int64) error {
		// Another goroutine of this replica wants the same run: the local mutex turns it away
		// without a Redis round trip.
		_, err := runs.TryAcquire(ctx, "wf:run:lock:run-7")
		fmt.Println("second goroutine:", err)
		return nil
	})
	fmt.Println("run step done:", err)
	// Output:
	// ttl 30s, renew every 10s, on renew failure: continue
	// second goroutine: lease: lock busy: acquire "wf:run:lock:run-7" in namespace workflow
	// run step done: <nil>
}

// Approval: a short critical section behind a 10s lease. A contender waits up to 2s, retrying
// every 25ms (plus jitter), then gives up with ErrBusy; release runs under its own 2s bound.
func ExampleNamespace_Acquire_approval() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	approvals, err := declare(rdb, "approval", lease.Policy{
		TTL:            10 * time.Second,
		AcquireTimeout: 2 * time.Second,
		RetryBackoff:   25 * time.Millisecond,
		ReleaseTimeout: 2 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	first, err := approvals.Acquire(ctx, "approval:job-9")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The first approver finishes after 100ms; the second waits for it.
	released := make(chan error, 1)
	time.AfterFunc(100*time.Millisecond, func() { released <- first.Release(ctx) })
	second, err := approvals.Acquire(ctx, "approval:job-9")
	fmt.Println("first release:", <-released)
	fmt.Println("second approver after waiting:", err)

	// A caller whose own deadline is shorter gives up sooner, still with ErrBusy.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = approvals.Acquire(short, "approval:job-9")
	fmt.Println("impatient third approver busy:", errors.Is(err, lease.ErrBusy))
	fmt.Println("second release:", second.Release(ctx))
	// Output:
	// first release: <nil>
	// second approver after waiting: <nil>
	// impatient third approver busy: true
	// second release: <nil>
}

// Reconciler: a per-loop lock held until expiry. TTL = 2 × the 30s poll interval, and the tick
// never deletes the key, so a second replica cannot run the same cycle; expiry rotates
// ownership.
func ExampleNamespace_TryAcquire_reconciler() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	const poll = 30 * time.Second
	policy := lease.Policy{TTL: 2 * poll, ReleaseMode: lease.HoldUntilExpiry}

	tick := func(replica string) {
		reconciler, err := declare(rdb, "reconciler", policy)
		if err != nil {
			fmt.Println(err)
			return
		}
		l, err := reconciler.TryAcquire(ctx, "reconciler:default")
		if errors.Is(err, lease.ErrBusy) {
			fmt.Println(replica, "skips this cycle")
			return
		}
		if err != nil {
			fmt.Println(replica, err)
			return
		}
		fmt.Println(replica, "reconciles")
		fmt.Println(replica, "tick done:", l.Release(ctx))
	}
	tick("replica-a")
	tick("replica-b")
	left := rdb.PTTL(ctx, "reconciler:default").Val()
	fmt.Println("lock held for the rest of the window:", left > poll)
	// Output:
	// replica-a reconciles
	// replica-a tick done: <nil>
	// replica-b skips this cycle
	// lock held for the rest of the window: true
}

// Snapshot writer: TTL 10s, writes every 5s, so a crashed writer is replaced within about 15s.
// The snapshot lives beside the lock (same hash tag), so each write is checked against the
// lock's newest fence: once writer 2 holds the lock, a paused writer 1 is refused, even before
// writer 2 has written.
func ExampleNamespace_FencedSet_snapshotWriter() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	const cadence = 5 * time.Second
	writers, err := declare(rdb, "snapshot", lease.Policy{TTL: 10 * time.Second, RenewInterval: cadence, Fencing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failover within", writers.Policy().TTL+cadence)
	const lock, snapshot = "{sys:snapshot}:writer", "{sys:snapshot}:data"

	w1, err := writers.Acquire(ctx, lock)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("writer 1:", writers.FencedSet(ctx, lock, w1.Fence(), snapshot, "snapshot from writer 1", 0))

	// Writer 1 stalls past its TTL (simulated by dropping its lock key); writer 2 takes over.
	rdb.Del(ctx, lock)
	w2, err := writers.Acquire(ctx, lock)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Writer 1 wakes up and writes late, before writer 2's first write.
	late := writers.FencedSet(ctx, lock, w1.Fence(), snapshot, "stale snapshot", 0)
	fmt.Println("writer 1 late is stale:", errors.Is(late, lease.ErrStaleFence))
	fmt.Println("writer 2:", writers.FencedSet(ctx, lock, w2.Fence(), snapshot, "snapshot from writer 2", 0))
	fmt.Println("stored:", rdb.Get(ctx, snapshot).Val())
	fmt.Println("writer 1 release:", errors.Is(w1.Release(ctx), lease.ErrNotOwned))
	fmt.Println("writer 2 release:", w2.Release(ctx))
	// Output:
	// failover within 15s
	// writer 1: <nil>
	// writer 1 late is stale: true
	// writer 2: <nil>
	// stored: snapshot from writer 2
	// writer 1 release: true
	// writer 2 release: <nil>
}

// Data away from the lock (here another key space; in practice often another Redis): the new
// holder claims the keys it guards before reading them, and from then on the old holder's
// writes are refused.
func ExampleGuard_Claim() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	billing, err := declare(rdb, "billing", lease.Policy{TTL: 30 * time.Second, Fencing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	store := billing.Guard(rdb) // the Redis client of the data store
	old, err := billing.Acquire(ctx, "billing:invoice:7")
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb.Del(ctx, "billing:invoice:7") // the old holder stalls past its TTL
	l, err := billing.Acquire(ctx, "billing:invoice:7")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Release(ctx)
	fmt.Println("claim:", store.Claim(ctx, l.Fence(), "invoice:7:total"))
	// ... read invoice:7:total, compute ...
	late := store.Set(ctx, old.Fence(), "invoice:7:total", "from the old holder", 0)
	fmt.Println("old holder is stale:", errors.Is(late, lease.ErrStaleFence))
	fmt.Println("write:", store.Set(ctx, l.Fence(), "invoice:7:total", "42.00", 0))
	// Output:
	// claim: <nil>
	// old holder is stale: true
	// write: <nil>
}

// Payment capture: check the lease by the library's own clock right before a side effect
// that must not happen twice. ValidUntil counts from when the acquire or last successful renew
// was sent, less a drift margin; past it, another replica may hold the lock. The check cannot
// cover a pause between it and the write, so the write still carries the fence token.
func ExampleLease_ValidUntil() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	payments, err := declare(rdb, "payment", lease.Policy{TTL: 30 * time.Second, Fencing: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := payments.Acquire(ctx, "payment:capture:order-17")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Release(ctx)

	// ... slow work: fetch the order, call the fraud check ...

	if !time.Now().Before(l.ValidUntil()) {
		fmt.Println("lease lapsed: skip the capture, the next owner retries it")
		return
	}
	err = payments.FencedSet(ctx, l.Key(), l.Fence(), "{payment:capture:order-17}:state", "captured", 0)
	fmt.Println("captured:", err)
	// Output:
	// captured: <nil>
}
