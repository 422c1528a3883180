package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A caller on a context that nothing cancels (its bound is an attemptCtx, which arms a timer
// only for a caller that may wait) whose command is queued behind the cap on sends returns at
// its acquire deadline, with the deadline's answer, and leaves the queue. Causally: the sends
// holding the cap are kept at a gate until after the queued caller returned, so it cannot have
// returned by being sent.
func TestQueuedCommandEndsAtDeadlineOnUncancelledContext(t *testing.T) {
	counter := &sendCounter{open: make(chan struct{})}
	e := newEnv(t, sharedAddr, counter)
	held := e.namespace(t, "scheduler", Policy{TTL: 10 * time.Second, DisableRenewal: true})
	n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second, DisableRenewal: true, AcquireTimeout: 50 * time.Millisecond})
	ctx := context.Background()

	slots := sendCap(e.c)
	counter.holding.Store(true)
	blocked := make(chan error, slots)
	for range slots {
		go func() {
			l, err := held.TryAcquire(ctx, uniqueKey(t))
			if err == nil {
				err = l.Release(ctx)
			}
			blocked <- err
		}()
	}
	waitFor(t, "the cap on sends to be reached", func() bool { return counter.singles.Load() == int64(slots) })

	returned := make(chan error, 1)
	go func() {
		_, err := n.TryAcquire(ctx, uniqueKey(t))
		returned <- err
	}()
	var err error
	select {
	case err = <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the queued caller was still waiting 10s after its 50ms acquire deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBusy) {
		t.Errorf("queued TryAcquire past its deadline = %v, want the deadline's error", err)
	}
	if q := queued(e.c); q != 0 {
		t.Errorf("%d commands still queued after their caller returned", q)
	}
	if s := counter.singles.Load(); s != int64(slots) {
		t.Errorf("%d lock commands sent on their own, want only the %d holding the cap: the queued one was sent", s, slots)
	}

	counter.holding.Store(false)
	for range slots {
		counter.open <- struct{}{}
	}
	for range slots {
		if err := <-blocked; err != nil {
			t.Errorf("a caller holding the cap: %v", err)
		}
	}
	if p := counter.pipelines.Load(); p != 0 {
		t.Errorf("%d pipelines sent after the queued caller returned, want none", p)
	}
}

// A command that waits inside go-redis for a pool connection (every connection taken by the
// application's own blocking command) returns at the acquire deadline, not at go-redis's
// PoolTimeout: the wait selects on the bound's Done, which must end at the deadline though
// nothing cancels the caller's context.
func TestPoolWaitEndsAtDeadlineOnUncancelledContext(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true, PoolSize: 1, PoolTimeout: time.Minute})
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := New(rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	n, err := c.Declare("approval", Policy{TTL: 10 * time.Second, DisableRenewal: true, AcquireTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list := uniqueKey(t)
	popped := make(chan error, 1)
	go func() { popped <- rdb.BLPop(ctx, 0, list).Err() }()
	waitFor(t, "the application's BLPOP to take the only connection", func() bool {
		s := rdb.PoolStats()
		return s.TotalConns == 1 && s.IdleConns == 0
	})

	returned := make(chan error, 1)
	go func() {
		_, err := n.TryAcquire(ctx, uniqueKey(t))
		returned <- err
	}()
	select {
	case err = <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("TryAcquire still waiting for a pool connection 10s after its 50ms acquire deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout) {
		t.Errorf("TryAcquire waiting for a connection past its deadline = %v, want the deadline's error", err)
	}

	other := redis.NewClient(&redis.Options{Addr: sharedAddr})
	defer other.Close()
	if err := other.RPush(ctx, list, "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-popped; err != nil {
		t.Fatalf("the application's BLPOP: %v", err)
	}
}
