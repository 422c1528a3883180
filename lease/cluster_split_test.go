package lease

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// healOnTryAgain is a hook of the cluster client (it sees each command once, after go-redis's
// own redirects and retries): the first time a command comes back TRYAGAIN, it runs heal (the
// rest of the slot's keys are moved) before handing the error to the caller, and records it.
type healOnTryAgain struct {
	redishook.PassThrough
	mu     sync.Mutex
	heal   func(ctx context.Context) error
	events []string
}

func (h *healOnTryAgain) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.mu.Lock()
		defer h.mu.Unlock()
		if !redis.IsTryAgainError(cmd.Err()) {
			h.events = append(h.events, "ok")
			return err
		}
		h.events = append(h.events, "TRYAGAIN")
		if h.heal != nil {
			if herr := h.heal(context.Background()); herr != nil {
				h.events = append(h.events, "heal failed: "+herr.Error())
			} else {
				h.events = append(h.events, "healed")
			}
			h.heal = nil
		}
		return err
	}
}

func (h *healOnTryAgain) arm(heal func(ctx context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.heal, h.events = heal, nil
}

func (h *healOnTryAgain) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// A reshard caught between two batches splits keys of one hash tag between two masters: a
// script on both is answered TRYAGAIN, go-redis gives up after its MaxRedirects, and the split
// ends when the next batch moves. Acquire and Release wait for that within their deadlines; so
// must a Renew (a failed renew counts towards abandonment), FencedSet and Guard.Set (a failed
// write fails the holder's job although its lease is fine). Each case splits the slot so that
// the call meets TRYAGAIN once, the hook moves the rest of the slot's keys as the reshard's next
// batch would, and the call must then succeed within its RenewTimeout.
func TestSlotSplitDuringRenewAndFencedWrites(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	hook := &healOnTryAgain{}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ContextTimeoutEnabled: true})
	rdb.AddHook(hook)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{reg: reg, c: c}
	// No background renew during the test (RenewInterval 20s); a generous RenewTimeout, since the
	// test is about what the call does with TRYAGAIN, not how fast.
	n := e.namespace(t, "split", Policy{TTL: 30 * time.Second, RenewInterval: 20 * time.Second,
		RenewTimeout: 10 * time.Second, RetryBackoff: 10 * time.Millisecond, Fencing: true, RecordHolder: true})

	type call func(t *testing.T, l *Lease, data string) error
	cases := []struct {
		name string
		// moved lists the keys MIGRATEd before the call; the slot's others stay on the source.
		moved func(lock, data string) []string
		call  call
		check func(t *testing.T, l *Lease, data string)
	}{{
		name:  "Renew",
		moved: func(lock, _ string) []string { return []string{lock} },
		call:  func(_ *testing.T, l *Lease, _ string) error { return l.Renew(ctx) },
		check: func(t *testing.T, l *Lease, _ string) {
			// The renew ran: the key's expiry is back at a full TTL (it was lowered to 10s).
			if pttl := rdb.PTTL(ctx, l.Key()).Val(); pttl < 20*time.Second {
				t.Errorf("PTTL of the lock after the renew = %v, want a full TTL again", pttl)
			}
		},
	}, {
		name:  "FencedSet",
		moved: func(_, data string) []string { return []string{data} },
		call: func(_ *testing.T, l *Lease, data string) error {
			return n.FencedSet(ctx, l.Key(), l.Fence(), data, "v2", 0)
		},
		check: func(t *testing.T, _ *Lease, data string) {
			if got := rdb.Get(ctx, data).Val(); got != "v2" {
				t.Errorf("data = %q, want v2", got)
			}
		},
	}, {
		name:  "Guard.Set",
		moved: func(_, data string) []string { return []string{data} },
		call: func(_ *testing.T, l *Lease, data string) error {
			return n.Guard(nil).Set(ctx, l.Fence(), data, "v2", 0)
		},
		check: func(t *testing.T, _ *Lease, data string) {
			if got := rdb.Get(ctx, data).Val(); got != "v2" {
				t.Errorf("data = %q, want v2", got)
			}
		},
	}}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tag := []string{"{split-renew}", "{split-fencedset}", "{split-guard}"}[i]
			lock, data := tag+":lock", tag+":data"
			l, err := n.Acquire(ctx, lock)
			if err != nil {
				t.Fatal(err)
			}
			// The data exists before the split, so that it is one of the split keys.
			if tc.name == "Guard.Set" {
				err = n.Guard(nil).Set(ctx, l.Fence(), data, "v1", 0)
			} else {
				err = n.FencedSet(ctx, lock, l.Fence(), data, "v1", 0)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := rdb.PExpire(ctx, lock, 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			slot := cluster.Slot(t, lock)
			from := cluster.MasterFor(t, lock)
			var to *redistest.Server
			for _, m := range cluster.Masters(t) {
				if m != from {
					to = m
				}
			}
			m := cluster.SplitSlot(t, slot, to, tc.moved(lock, data)...)
			hook.arm(m.MoveRest)

			before := e.metric(t, "lock_renewals_total", namespaceLabel, "split", "outcome", "failed")
			if err := tc.call(t, l, data); err != nil {
				t.Errorf("%s while the slot was split: %v (hook saw %v)", tc.name, err, hook.seen())
			}
			seen := hook.seen()
			if len(seen) < 2 || seen[0] != "TRYAGAIN" || seen[1] != "healed" {
				t.Fatalf("the call did not meet the split first (hook saw %v): the test tests nothing", seen)
			}
			if after := e.metric(t, "lock_renewals_total", namespaceLabel, "split", "outcome", "failed"); after != before {
				t.Errorf("lock_renewals_total{failed} went from %v to %v", before, after)
			}
			tc.check(t, l, data)
			m.Finish(t)
			if err := l.Release(ctx); err != nil {
				t.Errorf("Release: %v", err)
			}
			if n := rdb.Exists(ctx, lock, lockkeys.Holder(lock)).Val(); n != 0 {
				t.Errorf("%d of the lock and its holder key left after Release", n)
			}
		})
	}
	e.wantMetrics(t, "split", map[string]float64{
		"lock_renewals_total/ok":            1,
		"lock_renewals_total/failed":        0,
		"lock_fenced_writes_total/applied":  5,
		"lock_fenced_writes_total/rejected": 0,
		"lock_releases_total/ok":            3,
		"lock_held":                         0,
	})
}

// holdAfterTryAgain is a hook of the cluster client: once a command has come back TRYAGAIN, it
// holds the next one until its context ends, as go-redis's own backoff between its retries of
// TRYAGAIN is cut by the caller's deadline. It records what it did.
type holdAfterTryAgain struct {
	redishook.PassThrough
	mu     sync.Mutex
	seen   bool
	events []string
}

func (h *holdAfterTryAgain) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		hold := h.seen
		h.mu.Unlock()
		if hold {
			<-ctx.Done()
			h.mu.Lock()
			h.events = append(h.events, "held until the deadline")
			h.mu.Unlock()
			return ctx.Err()
		}
		err := next(ctx, cmd)
		if redis.IsTryAgainError(cmd.Err()) {
			h.mu.Lock()
			h.seen = true
			h.events = append(h.events, "TRYAGAIN")
			h.mu.Unlock()
		}
		return err
	}
}

// An acquire that meets a slot move (Redis answers TRYAGAIN: here the fence key has moved to
// the new master and the lock key does not exist, which Redis refuses until the move ends) and
// runs out of time while go-redis backs off before its next try must say that the slot is
// moving, as it does when the deadline passes in its own pause: it said "no answer from Redis
// before the acquire deadline", sending an operator after an outage during a routine reshard.
func TestAcquireCutDuringASlotMoveSaysSo(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	hook := &holdAfterTryAgain{}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{reg: reg, c: c}
	n := e.namespace(t, "moving", Policy{TTL: 30 * time.Second, AcquireTimeout: 2 * time.Second, Fencing: true})
	const lock = "{acquire-moving}:lock"
	l, err := n.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	from := cluster.MasterFor(t, lock)
	var to *redistest.Server
	for _, m := range cluster.Masters(t) {
		if m != from {
			to = m
		}
	}
	m := cluster.SplitSlot(t, cluster.Slot(t, lock), to, lockkeys.Fence(lock))
	rdb.AddHook(hook)
	_, err = n.Acquire(ctx, lock)
	hook.mu.Lock()
	events := append([]string(nil), hook.events...)
	hook.mu.Unlock()
	if len(events) != 2 || events[0] != "TRYAGAIN" || events[1] != "held until the deadline" {
		t.Fatalf("hook saw %v, want a TRYAGAIN, then an attempt held until the deadline", events)
	}
	if err == nil || !strings.Contains(err.Error(), "slot") || !redis.IsTryAgainError(err) {
		t.Errorf("Acquire cut while the slot was moving = %v, want an error that says the slot is moving, wrapping TRYAGAIN", err)
	}
	if strings.Contains(fmt.Sprint(err), "no answer") {
		t.Errorf("Acquire = %v: Redis answered (TRYAGAIN)", err)
	}
	if got := e.metric(t, "lock_acquire_wait_seconds", namespaceLabel, "moving", "outcome", "error"); got != 1 {
		t.Errorf("acquire errors counted = %v, want 1", got)
	}
	m.Finish(t)
}
