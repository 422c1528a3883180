package wire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var errQueuedBound = errors.New("queued command's bound")

// A caller on a context that nothing cancels (its bound is an attemptCtx, which arms a timer
// only for a caller that may wait) whose command is queued behind the cap on sends returns at
// its deadline, with the deadline's answer and the bound's cause, and leaves the queue.
// Causally: the sends holding the cap are kept at a gate until after the queued caller
// returned, so it cannot have returned by being sent.
func TestQueuedCommandEndsAtDeadlineOnUncancelledContext(t *testing.T) {
	counter := &sendCounter{open: make(chan struct{})}
	sender := newTestSender(t, sharedAddr, counter)
	ctx := context.Background()

	slots := sendCap(sender)
	counter.holding.Store(true)
	blocked := make(chan error, slots)
	for range slots {
		go func() { blocked <- setAndDelete(ctx, sender, uniqueKey(t)) }()
	}
	waitFor(t, "the cap on sends to be reached", func() bool { return counter.singles.Load() == int64(slots) })

	returned := make(chan error, 1)
	go func() {
		bctx, bound := BoundBy(ctx, time.Now().Add(50*time.Millisecond), errQueuedBound)
		defer bound.End()
		_, err := setNX(bctx, sender, uniqueKey(t))
		if cause := Cause(bctx); cause != errQueuedBound {
			t.Errorf("cause of the queued command's context = %v, want its bound's", cause)
		}
		returned <- err
	}()
	var err error
	select {
	case err = <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the queued caller was still waiting 10s after its 50ms deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued SET NX past its deadline = %v, want the deadline's error", err)
	}
	if q := queued(sender); q != 0 {
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
// application's own blocking command) returns at its bound's deadline, not at go-redis's
// PoolTimeout: the wait selects on the bound's Done, which must end at the deadline though
// nothing cancels the caller's context.
func TestPoolWaitEndsAtDeadlineOnUncancelledContext(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true, PoolSize: 1, PoolTimeout: time.Minute})
	t.Cleanup(func() { _ = rdb.Close() })
	sender := NewSender(rdb)
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
		bctx, bound := BoundBy(ctx, time.Now().Add(50*time.Millisecond), nil)
		defer bound.End()
		_, err := setNX(bctx, sender, uniqueKey(t))
		returned <- err
	}()
	var err error
	select {
	case err = <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("SET NX still waiting for a pool connection 10s after its 50ms deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout) {
		t.Errorf("SET NX waiting for a connection past its deadline = %v, want the deadline's error", err)
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
