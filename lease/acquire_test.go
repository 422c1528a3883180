package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Test 9: a waiting acquire honours its deadline and backoff (ErrBusy near the deadline) and
// the caller's cancellation. Lower bounds are exact (ErrBusy never comes before the deadline,
// attempts are never closer than the backoff); upper bounds take their slack from the stalls
// the test measured.
func TestAcquireWaitDeadlineBackoffAndCancel(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		const (
			timeout = 300 * time.Millisecond
			backoff = 25 * time.Millisecond
		)
		tests := []struct {
			name       string
			ctx        func() (context.Context, context.CancelFunc)
			wantCause  error // besides ErrBusy
			minElapsed time.Duration
		}{
			{
				name:       "acquire timeout",
				ctx:        func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
				minElapsed: timeout,
			},
			{
				name: "caller cancels",
				ctx: func() (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					time.AfterFunc(100*time.Millisecond, cancel)
					return ctx, cancel
				},
				wantCause:  context.Canceled,
				minElapsed: 100 * time.Millisecond,
			},
			{
				name: "caller deadline sooner",
				ctx: func() (context.Context, context.CancelFunc) {
					return context.WithTimeout(context.Background(), 150*time.Millisecond)
				},
				wantCause:  context.DeadlineExceeded,
				minElapsed: 150 * time.Millisecond,
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				attempts := &faultHook{match: isSetNX}
				e := newEnvMode(t, sharedAddr, single, attempts)
				stalls := stallMeter(t)
				n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second, AcquireTimeout: timeout, RetryBackoff: backoff})
				key := uniqueKey(t)
				holder, err := n.Acquire(context.Background(), key)
				if err != nil {
					t.Fatal(err)
				}
				defer holder.Release(context.Background())

				// The clock starts before the context's deadline or cancel timer does, so
				// that minElapsed is a true lower bound however the goroutine is scheduled.
				start := time.Now()
				ctx, cancel := tc.ctx()
				defer cancel()
				_, err = n.Acquire(ctx, key)
				elapsed := time.Since(start)
				if !errors.Is(err, ErrBusy) {
					t.Fatalf("Acquire on a held lock = %v, want ErrBusy", err)
				}
				if tc.wantCause != nil && !errors.Is(err, tc.wantCause) {
					t.Errorf("error %v does not carry the caller's cause %v", err, tc.wantCause)
				}
				if maxElapsed := tc.minElapsed + stalls.Slack(callSlack); elapsed < tc.minElapsed || elapsed > maxElapsed {
					t.Errorf("gave up after %s, want within [%s, %s] (slack for a worst stall of %s)", elapsed, tc.minElapsed, maxElapsed, stalls.Worst())
				}
				// Each pause is backoff plus up to half of it in jitter: attempts are never
				// closer than backoff, however the process was scheduled, and an acquire that
				// was not stalled for most of its wait retried.
				sent := attempts.sendTimes()[1:] // the holder's acquire first
				for i := 1; i < len(sent); i++ {
					if gap := sent[i].Sub(sent[i-1]); gap < backoff {
						t.Errorf("attempts %d and %d only %s apart, want at least the %s backoff", i, i+1, gap, backoff)
					}
				}
				if len(sent) < 2 && stalls.Worst() < tc.minElapsed/2 {
					t.Errorf("%d attempts in %s with a %s backoff and no stall longer than %s: it did not retry", len(sent), elapsed, backoff, stalls.Worst())
				}
				e.wantMetrics(t, "approval", map[string]float64{
					"lock_acquire_wait_seconds/busy":     1,
					"lock_acquire_wait_seconds/acquired": 1,
					"lock_acquire_wait_seconds/error":    0,
				})
			})
		}
	})
}

// An acquire waits for a holder that releases before the deadline.
func TestAcquireWaitsForRelease(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		e := newEnvMode(t, sharedAddr, single)
		n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second})
		key := uniqueKey(t)
		holder, err := n.Acquire(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(100*time.Millisecond, func() { _ = holder.Release(context.Background()) })
		l, err := n.Acquire(context.Background(), key)
		if err != nil {
			t.Fatalf("Acquire after the holder released: %v", err)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if e.metric(t, "lock_acquire_wait_seconds", namespaceLabel, "approval", "outcome", "acquired") != 2 {
			t.Error("acquisitions not counted")
		}
	})
}

// TryAcquire makes exactly one attempt: the bookkeeping (SET NX sent once, one busy outcome)
// shows it did not retry, without timing a round trip.
func TestTryAcquireDoesNotWait(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		attempts := &faultHook{match: isSetNX}
		e := newEnvMode(t, sharedAddr, single, attempts)
		n := e.namespace(t, "collector", Policy{TTL: 10 * time.Minute, RenewInterval: 3 * time.Minute})
		key := uniqueKey(t)
		holder, err := n.TryAcquire(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Release(context.Background())
		if _, err := n.TryAcquire(context.Background(), key); !errors.Is(err, ErrBusy) {
			t.Fatalf("TryAcquire on a held lock = %v", err)
		}
		if got := attempts.calls.Load(); got != 2 {
			t.Errorf("%d SET NX sent, want 2: the holder's and one attempt", got)
		}
		e.wantMetrics(t, "collector", map[string]float64{"lock_acquire_wait_seconds/busy": 1, "lock_acquire_wait_seconds/acquired": 1})
	})
}

// With LocalMutex, goroutines of one process queue in-process: a contender waits without
// polling Redis, and TryAcquire fails fast without a round trip.
func TestLocalMutexQueuesInProcess(t *testing.T) {
	attempts := &faultHook{match: isSetNX}
	e := newEnv(t, sharedAddr, attempts)
	n := e.namespace(t, "workflow", Policy{TTL: 10 * time.Second, LocalMutex: true})
	key := uniqueKey(t)
	holder, err := n.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.TryAcquire(context.Background(), key); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryAcquire behind the local mutex = %v", err)
	}
	var wg sync.WaitGroup
	acquired := make(chan *Lease, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		l, err := n.Acquire(context.Background(), key)
		if err != nil {
			t.Errorf("waiting Acquire: %v", err)
			return
		}
		acquired <- l
	}()
	time.Sleep(150 * time.Millisecond)
	if got := attempts.calls.Load(); got != 1 {
		t.Errorf("%d SET NX round trips while the key was held in-process, want only the holder's", got)
	}
	if err := holder.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l := <-acquired
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := attempts.calls.Load(); got != 2 {
		t.Errorf("%d SET NX round trips, want 2", got)
	}
	if len(n.local.slots) != 0 {
		t.Errorf("local slots left behind: %d", len(n.local.slots))
	}
	// A local wait that runs out is ErrBusy too.
	if holder, err = n.Acquire(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	defer holder.Release(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := n.Acquire(ctx, key); !errors.Is(err, ErrBusy) {
		t.Errorf("Acquire behind a held local mutex = %v, want ErrBusy", err)
	}
	e.wantMetrics(t, "workflow", map[string]float64{"lock_acquire_wait_seconds/busy": 2, "lock_acquire_wait_seconds/acquired": 3})
}

// An acquire that cannot reach Redis is an error (not ErrBusy), bounded by the caller's ctx.
func TestAcquireErrorWhenRedisIsDown(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		e := newEnvMode(t, srv.Addr, single)
		stalls := stallMeter(t)
		n := e.namespace(t, "approval", Policy{Fencing: true})
		srv.Pause()
		defer srv.Resume()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := n.Acquire(ctx, uniqueKey(t))
		if err == nil || errors.Is(err, ErrBusy) {
			t.Fatalf("Acquire with Redis paused = %v, want a Redis error", err)
		}
		if took, slack := time.Since(start), stalls.Slack(callSlack); took > 200*time.Millisecond+slack {
			t.Errorf("Acquire took %s despite a 200ms deadline (slack %s for the stalls seen)", took, slack)
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_acquire_wait_seconds/error": 1, "lock_held": 0})
	})
}
