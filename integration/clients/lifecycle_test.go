package clients_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// spacedGap is the time between two events on one key when the test does not scrape between
// them: above the tracking feed's documented bound (docs/exporter.md, "Accuracy on the tracking
// feed": exact at gaps of 300 ms), so that no two events merge into one reading.
const spacedGap = 400 * time.Millisecond

// lockNamespace is the namespace of one client kind's locks, named after the kind, and the
// prefix of its Redis keys.
func lockNamespace(kind clients.Kind, prefix string) (collectors.Namespace, string) {
	ns := collectors.Namespace{Name: string(kind), Pattern: clients.RedisKey(kind, prefix) + "*"}
	if kind == clients.Redisson {
		ns.Types = []string{collectors.TypeHash}
	}
	return ns, clients.RedisKey(kind, prefix)
}

// otherNamespace sits beside the lock namespaces; only keys that are not locks are written there.
var otherNamespace = collectors.Namespace{Name: "other", Pattern: "other:*"}

// unrelated writes keys the lifecycle must not count: keys of other types under the lock
// prefix (a hash is a lock only for Redisson, a string only for the others), keys of other
// types in another namespace, and keys of no namespace. i varies the values between calls.
func unrelated(t *testing.T, c *redis.Client, kind clients.Kind, prefix string, i int) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, prefix+"queue", i)
		p.SAdd(ctx, prefix+"members", i)
		p.ZAdd(ctx, prefix+"ranks", redis.Z{Score: float64(i), Member: "m"})
		if kind == clients.Redisson {
			p.Set(ctx, prefix+"string", i, time.Minute)
		} else {
			p.HSet(ctx, prefix+"hash", "f", i)
		}
		p.RPush(ctx, "other:queue", i)
		p.HSet(ctx, "other:hash", "f", i)
		p.Set(ctx, fmt.Sprintf("elsewhere:%d", i), i, time.Minute)
		p.Del(ctx, fmt.Sprintf("elsewhere:%d", i-1))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// spacedHolders are the three workers of TestLifecycleSpacedOnTracking: A and C in one client
// process, B in another.
type spacedHolders struct{ a, b, c *clients.Holder }

// playSpaced is one client's lifecycle, each step followed by between: acquire, renew (each
// way the client renews), a busy attempt, release, another holder's acquire and release, a
// lapse taken over by a third holder with the stale holder's step after it, and a lapse nobody
// takes over.
func playSpaced(t *testing.T, r *clients.Runner, kind clients.Kind, h spacedHolders, prefix string, between func()) {
	held, lapsed, alone := prefix+"held", prefix+"lapsed", prefix+"alone"
	step := func(what string, got clients.Outcome, want clients.Result) {
		t.Helper()
		wantResult(t, what, got, want)
		between()
	}
	step("A acquires", h.a.Acquire(held, longLease), clients.Acquired)
	switch kind {
	case clients.RedisPy:
		// Before the extend: reacquire resets the expiry to the lock's timeout, which after an
		// extend (that adds to it) would move it earlier: no renewal.
		step("A reacquires", h.a.Do(clients.OpReacquire, held, 0), clients.Extended)
	case clients.Redisson:
		step("A re-enters", h.a.Acquire(held, longLease), clients.Reentered)
		step("A unlocks once", h.a.Release(held), clients.Decremented)
	}
	step("A extends", h.a.Extend(held, longLease), clients.Extended)
	wantResult(t, "B tries the held lock", h.b.Acquire(held, longLease), clients.Busy)
	step("A releases", h.a.Release(held), clients.Released)
	step("B acquires", h.b.Acquire(held, longLease), clients.Acquired)
	step("B releases", h.b.Release(held), clients.Released)

	wantResult(t, "B acquires with a short lease", h.b.Acquire(lapsed, shortLease), clients.Acquired)
	r.WaitGone(clients.RedisKey(kind, lapsed), shortLease)
	between()
	step("C takes the lapsed lock over", h.c.Acquire(lapsed, longLease), clients.Acquired)
	wantResult(t, "B's stale extend", h.b.Extend(lapsed, longLease), clients.NotOwned)
	step("C extends", h.c.Extend(lapsed, longLease), clients.Extended)
	step("C releases", h.c.Release(lapsed), clients.Released)

	wantResult(t, "A acquires with a short lease", h.a.Acquire(alone, shortLease), clients.Acquired)
	r.WaitGone(clients.RedisKey(kind, alone), shortLease)
	between()
	wantResult(t, "A's stale extend", h.a.Extend(alone, longLease), clients.NotOwned)
}

// TestLifecycleSpacedOnTracking: for each client, every lifecycle event the clients report —
// acquisitions, renewals of each kind the client has, releases, a lapse taken over, a lapse
// alone — spaced wider than the tracking feed's bound, with a scrape after every step or none
// until the end, is counted by the exporter exactly: acquisitions, takeovers, renewals and ends
// by reason equal the clients' truth, and keys that are not locks, beside them, count nothing.
func TestLifecycleSpacedOnTracking(t *testing.T) {
	for _, kind := range clients.Kinds() {
		for _, scraped := range []bool{true, false} {
			name := string(kind) + "/spaced"
			if scraped {
				name = string(kind) + "/scraped"
			}
			t.Run(name, func(t *testing.T) { spacedOnTracking(t, kind, scraped) })
		}
	}
}

func spacedOnTracking(t *testing.T, kind clients.Kind, scraped bool) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ns, prefix := lockNamespace(kind, "lc:")
	unrelated(t, admin, kind, prefix, 0)
	exp := startExporter(t, srv.Addr, collectors.FeedTracking, []collectors.Namespace{ns, otherNamespace})
	r := clients.NewRunner(t, srv.Addr)
	first, second := clients.Start(t, kind, srv.Addr), clients.Start(t, kind, srv.Addr)
	h := spacedHolders{a: r.Holder(first, "A"), b: r.Holder(second, "B"), c: r.Holder(first, "C")}
	steps := 0
	between := func() {
		steps++
		unrelated(t, admin, kind, prefix, steps)
		if scraped {
			exp.scrape()
			return
		}
		time.Sleep(spacedGap)
	}
	playSpaced(t, r, kind, h, "lc:", between)

	got := exp.scrape()
	wantExact(t, got, ns.Name, r, prefix)
	if want := fromTruth(clients.Counts{}); got[otherNamespace.Name].counts() != want.counts() {
		t.Errorf("namespace other (no locks written): %s, want all 0", got[otherNamespace.Name].counts())
	}
	for name, l := range got {
		if l.following != 1 {
			t.Errorf("%s: lifecycle_following %v, want 1", name, l.following)
		}
	}
}

// notifyAll is the keyspace-notification setting of the contention and fault tests: keyspace
// and keyevent channels, generic, string, hash and expiry events.
const notifyAll = "KEg$hx"

// contention is the shape of TestLifecycleHandoffsOnNotifications per client kind.
const (
	contendedKeys   = 2
	holdersPerKind  = 4
	holdsPerHolder  = 6
	lapseEvery      = 3 // every third hold of a holder lapses
	attemptsPerHold = 2000
)

// contend is one worker: it tries, without waiting, to take one of the contended locks until
// it has held holdsPerHolder of them. A hold is renewed (a Redisson holder re-enters and unlocks
// once too) and released at once, so the next holder's acquisition follows the release by
// the time of one step; every lapseEvery-th hold is left to lapse instead, and its holder's
// stale extend is its client's verdict on it.
func contend(t *testing.T, r *clients.Runner, h *clients.Holder, prefix string) {
	held := 0
	for attempt := 0; held < holdsPerHolder; attempt++ {
		if attempt == attemptsPerHold*holdsPerHolder {
			t.Errorf("%s held %d locks in %d attempts", h.Name(), held, attempt)
			return
		}
		name := fmt.Sprintf("%s%d", prefix, attempt%contendedKeys)
		lapses := (held+1)%lapseEvery == 0
		lease := longLease
		if lapses {
			lease = shortLease
		}
		if h.Acquire(name, lease).Result != clients.Acquired {
			continue
		}
		held++
		if lapses {
			r.WaitGone(clients.RedisKey(h.Kind(), name), lease)
			if got := h.Extend(name, longLease); got.Result != clients.NotOwned {
				t.Errorf("%s's extend after its lease ended: %v, want not owned", h.Name(), got)
			}
			continue
		}
		if h.Kind() == clients.Redisson {
			h.Acquire(name, longLease)
			h.Release(name)
		}
		h.Extend(name, longLease)
		h.Release(name)
	}
}

// handoffPrefix is the prefix of a client kind's lock names in a test where every kind shares
// one Redis: redis-py, redlock and Redisson store a lock at the name they are given.
func handoffPrefix(kind clients.Kind) string { return "hand:" + string(kind) + ":" }

// TestLifecycleHandoffsOnNotifications: on the keyspace-notifications feed, several holders of
// every client contend for a few locks with no spacing at all — a release is followed by
// another holder's acquisition within milliseconds — renewing, releasing and letting some
// holds lapse; the exporter's counters equal the clients' truth exactly.
func TestLifecycleHandoffsOnNotifications(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", notifyAll))
	var namespaces []collectors.Namespace
	prefixes := map[clients.Kind]string{}
	for _, kind := range clients.Kinds() {
		ns, prefix := lockNamespace(kind, handoffPrefix(kind))
		namespaces = append(namespaces, ns)
		prefixes[kind] = prefix
	}
	exp := startExporter(t, srv.Addr, collectors.FeedNotifications, namespaces)
	runners := map[clients.Kind]*clients.Runner{}
	var wg sync.WaitGroup
	for _, kind := range clients.Kinds() {
		r := clients.NewRunner(t, srv.Addr)
		runners[kind] = r
		drivers := []clients.Driver{clients.Start(t, kind, srv.Addr), clients.Start(t, kind, srv.Addr)}
		for i := range holdersPerKind {
			h := r.Holder(drivers[i%len(drivers)], fmt.Sprintf("%s-%d", kind, i))
			wg.Go(func() { contend(t, r, h, handoffPrefix(kind)) })
		}
	}
	wg.Wait()
	got := exp.scrape()
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			wantExact(t, got, string(kind), runners[kind], prefixes[kind])
			if got[string(kind)].following != 1 {
				t.Errorf("lifecycle_following %v, want 1", got[string(kind)].following)
			}
		})
	}
}
