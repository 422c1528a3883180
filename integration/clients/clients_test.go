package clients_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	// shortLease is long enough for a loaded machine to take the next step before it ends in the
	// tests that need the lock held, and short enough that lapses end quickly.
	shortLease = 500 * time.Millisecond
	longLease  = 60 * time.Second
)

func wantResult(t *testing.T, step string, got clients.Outcome, want clients.Result) {
	t.Helper()
	if got.Result != want {
		t.Fatalf("%s: %v, want %s", step, got, want)
	}
}

func wantCounts(t *testing.T, r *clients.Runner, key string, want clients.Counts) {
	t.Helper()
	if got := r.Truth().Counts(key); got != want {
		t.Errorf("truth for %s = %+v, want %+v (events %v)", key, got, want, r.Truth().Events(key))
	}
}

func TestAcquireRelease(t *testing.T) {
	srv := redistest.Start(t)
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			d := clients.Start(t, kind, srv.Addr)
			t.Logf("client: %s", d.Version())
			r := clients.NewRunner(t, srv.Addr)
			a, b := r.Holder(d, "A"), r.Holder(d, "B")
			name := "acquire-release:" + string(kind)

			wantResult(t, "A acquires", a.Acquire(name, longLease), clients.Acquired)
			wantResult(t, "B acquires the held lock", b.Acquire(name, longLease), clients.Busy)
			wantResult(t, "A releases", a.Release(name), clients.Released)
			if n := r.Redis().Exists(t.Context(), clients.RedisKey(kind, name)).Val(); n != 0 {
				t.Errorf("the key is still there after the release")
			}
			wantCounts(t, r, clients.RedisKey(kind, name), clients.Counts{Acquired: 1, Released: 1})
			if err := r.Truth().Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

// staleCase is what one client answers to a step its holder takes after its lock lapsed and
// another holder took the key.
type staleCase struct {
	op        clients.Op
	result    clients.Result
	errorType string
	// inconsistent: the client reported success where the truth knows the hold had ended.
	inconsistent string
}

func TestLapseTakeoverStaleStep(t *testing.T) {
	srv := redistest.Start(t)
	tests := map[clients.Kind][]staleCase{
		clients.RedisPy: {
			{op: clients.OpRelease, result: clients.NotOwned, errorType: "LockNotOwnedError"},
			{op: clients.OpExtend, result: clients.NotOwned, errorType: "LockNotOwnedError"},
		},
		clients.Redlock: {
			{op: clients.OpRelease, result: clients.NotOwned, errorType: "ExecutionError"},
			{op: clients.OpExtend, result: clients.NotOwned, errorType: "ExecutionError"},
		},
		clients.RedisSemaphore: {
			// redis-semaphore learns of a lost lock only from its refresh (onLockLost); its
			// release resolves either way.
			{op: clients.OpExtend, result: clients.NotOwned, errorType: "LostLockError"},
			{op: clients.OpRelease, result: clients.Released, inconsistent: "did not notice its lapse"},
		},
		clients.Redisson: {
			{op: clients.OpRelease, result: clients.NotOwned, errorType: "IllegalMonitorStateException"},
			// The watchdog's renewal finds no field and stops, raising nothing.
			{op: clients.OpExtend, result: clients.NotOwned},
		},
	}
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			// Two clients, as two workers would be: the stale one and the one that takes over.
			staleClient, nextClient := clients.Start(t, kind, srv.Addr), clients.Start(t, kind, srv.Addr)
			for i, tc := range tests[kind] {
				t.Run(string(tc.op), func(t *testing.T) {
					r := clients.NewRunner(t, srv.Addr)
					stale, next := r.Holder(staleClient, fmt.Sprintf("A%d", i)), r.Holder(nextClient, fmt.Sprintf("B%d", i))
					name := fmt.Sprintf("lapse:%s:%s", kind, tc.op)
					key := clients.RedisKey(kind, name)

					r.Lapse(name, stale, shortLease, next, longLease)
					got := stale.Do(tc.op, name, longLease)
					if got.Result != tc.result || got.ErrorType != tc.errorType {
						t.Fatalf("stale %s: %v, want %s with error type %q", tc.op, got, tc.result, tc.errorType)
					}
					wantResult(t, "the new holder releases", next.Release(name), clients.Released)
					checkLapseTruth(t, r, key, stale.Name(), next.Name(), tc.inconsistent)
				})
			}
		})
	}
}

func checkLapseTruth(t *testing.T, r *clients.Runner, key, stale, next, inconsistent string) {
	t.Helper()
	err := r.Truth().Err()
	if inconsistent != "" {
		if err == nil || !strings.Contains(err.Error(), inconsistent) {
			t.Errorf("truth Err = %v, want one saying %q", err, inconsistent)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []clients.Event{
		{Kind: clients.EventAcquired, Holder: stale},
		{Kind: clients.EventLapsed, Holder: stale},
		{Kind: clients.EventAcquired, Holder: next},
		{Kind: clients.EventTakenOver, Holder: next},
		{Kind: clients.EventReleased, Holder: next},
	}
	if got := r.Truth().Events(key); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	wantCounts(t, r, key, clients.Counts{Acquired: 2, Released: 1, Lapsed: 1, TakenOver: 1})
}

func TestExtendMovesExpiryLater(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 10 * time.Second
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			r := clients.NewRunner(t, srv.Addr)
			a := r.Holder(clients.Start(t, kind, srv.Addr), "A")
			name := "extend:" + string(kind)
			key := clients.RedisKey(kind, name)

			wantResult(t, "A acquires", a.Acquire(name, lease), clients.Acquired)
			before := expiresAt(t, r, key)
			waitPTTLBelow(t, r, key, lease-200*time.Millisecond)
			wantResult(t, "A extends", a.Extend(name, lease), clients.Extended)
			if after := expiresAt(t, r, key); !after.After(before) {
				t.Errorf("expiry after the extend %v, before %v: want it later", after, before)
			}
			wantResult(t, "A releases", a.Release(name), clients.Released)
			wantCounts(t, r, key, clients.Counts{Acquired: 1, Renewed: 1, Released: 1})
		})
	}
}

// expiresAt is the key's expiry by Redis' clock (PEXPIRETIME): comparing two of them says
// whether the expiry moved, however long the steps between took.
func expiresAt(t *testing.T, r *clients.Runner, key string) time.Time {
	t.Helper()
	ms, err := r.Redis().Do(t.Context(), "PEXPIRETIME", key).Int64()
	if err != nil || ms < 0 {
		t.Fatalf("PEXPIRETIME %s = %d, %v: want an expiry", key, ms, err)
	}
	return time.UnixMilli(ms)
}

// waitPTTLBelow polls the key's PTTL until it is below limit: that much time has passed since
// the lock's expiry was set, by Redis' own clock.
func waitPTTLBelow(t *testing.T, r *clients.Runner, key string, limit time.Duration) {
	t.Helper()
	for {
		pttl, err := r.Redis().PTTL(t.Context(), key).Result()
		if err != nil {
			t.Fatalf("PTTL %s: %v", key, err)
		}
		if pttl <= 0 {
			t.Fatalf("PTTL %s = %v: the lock is gone or has no expiry", key, pttl)
		}
		if pttl < limit {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
