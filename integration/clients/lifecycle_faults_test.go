package clients_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// faultCase is one fault of TestLifecycleUnderFaults: inject breaks what the exporter follows,
// heal (nil: nothing to do) lets it follow again, after the exporter noticed the fault
// (lifecycle_following 0) when untilNoticed, else at once.
type faultCase struct {
	name         string
	inject       func(t *testing.T, srv *redistest.Server, admin *redis.Client)
	heal         func(t *testing.T, srv *redistest.Server, admin *redis.Client)
	untilNoticed bool
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// faultCases are the faults the exporter must survive without counting more than happened.
func faultCases() []faultCase {
	ctx := context.Background()
	return []faultCase{
		{name: "feed connection killed", inject: func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
			must(t, admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err())
		}},
		{name: "server restart", inject: func(_ *testing.T, srv *redistest.Server, _ *redis.Client) {
			srv.Restart()
		}},
		{name: "FLUSHALL", inject: func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
			must(t, admin.FlushAll(ctx).Err())
		}},
		{name: "SWAPDB", inject: func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
			must(t, admin.Do(ctx, "SWAPDB", 0, 1).Err())
		}},
		notificationsOff("notifications switched off and on again at once", false),
		notificationsOff("notifications switched off until noticed", true),
	}
}

// notificationsOff switches keyspace notifications off at run time, and on again.
func notificationsOff(name string, untilNoticed bool) faultCase {
	ctx := context.Background()
	return faultCase{name: name, untilNoticed: untilNoticed, inject: func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
		must(t, admin.ConfigSet(ctx, "notify-keyspace-events", "").Err())
	}, heal: func(t *testing.T, _ *redistest.Server, admin *redis.Client) {
		must(t, admin.ConfigSet(ctx, "notify-keyspace-events", notifyAll).Err())
	}}
}

// faultHolders are one client kind's workers in a fault case: A takes locks before, during and
// after the fault; B holds one across it. after runs after every step: a scrape, so that the
// steps of one hold reach the exporter in separate drains and only the fault can make the
// counters fall short (TestLifecycleHandoffsOnNotifications covers steps within one drain).
type faultHolders struct {
	kind  clients.Kind
	a, b  *clients.Holder
	after func()
}

// hold is a lock taken, renewed and released. Outcomes are not asserted: during a fault a
// client may fail a step (a restart drops its connection), and the truth records whatever it
// concluded. redlock's extend is left out: it rewrites the key with SET, which the exporter
// counts as another holder's overwrite (TestLifecycleHandoffsOnNotifications/redlock), and
// this test is about the faults.
func (h faultHolders) hold(name string) {
	h.a.Acquire(name, longLease)
	h.after()
	if h.kind != clients.Redlock {
		h.a.Extend(name, longLease)
		h.after()
	}
	h.a.Release(name)
	h.after()
}

// lapse is a lock left to lapse, and its holder's stale extend.
func (h faultHolders) lapse(r *clients.Runner, name string) {
	if h.a.Acquire(name, shortLease).Result == clients.Acquired {
		h.after()
		r.WaitGone(clients.RedisKey(h.kind, name), shortLease)
	}
	h.after()
	h.a.Extend(name, longLease)
}

// gapRecorder scrapes and remembers, per namespace, whether a scrape read
// lock_exporter_lifecycle_following 0 while recording is on.
type gapRecorder struct {
	exp       *exporter
	recording bool
	stopped   map[string]bool
}

func (g *gapRecorder) scrape() { g.record() }

// record scrapes once, notes the namespaces not followed while recording, and says whether
// every namespace was followed.
func (g *gapRecorder) record() bool {
	got, _ := g.exp.gather()
	following := allFollowing(got, g.exp.names)
	if g.recording {
		for _, name := range g.exp.names {
			if l, ok := got[name]; !ok || l.following == 0 {
				g.stopped[name] = true
			}
		}
	}
	return following
}

// awaitStopped records scrapes until a namespace is not followed.
func (g *gapRecorder) awaitStopped(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); len(g.stopped) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the exporter did not notice the fault in 60s: lifecycle_following stayed 1")
		}
		g.record()
	}
}

// awaitFollowing records scrapes until every namespace is followed again.
func (g *gapRecorder) awaitFollowing(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !g.record(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lifecycle is not followed again 60s after the fault")
		}
	}
}

// TestLifecycleUnderFaults: every client holds, renews, releases and lapses locks before a
// fault, during it and after the exporter follows again. Under each fault — the feed's
// connection killed, a restart, FLUSHALL, SWAPDB, notifications switched off at run time —
// no counter exceeds the clients' truth, and where the counters fell short of it a scrape
// during the gap read lifecycle_following 0.
func TestLifecycleUnderFaults(t *testing.T) {
	for _, fc := range faultCases() {
		t.Run(fc.name, func(t *testing.T) { underFault(t, fc) })
	}
}

func underFault(t *testing.T, fc faultCase) {
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", notifyAll))
	admin := srv.Client(t)
	var namespaces []collectors.Namespace
	var kinds []faultHolders
	r := clients.NewRunner(t, srv.Addr)
	for _, kind := range clients.Kinds() {
		ns, _ := lockNamespace(kind, handoffPrefix(kind))
		namespaces = append(namespaces, ns)
		d := clients.Start(t, kind, srv.Addr)
		kinds = append(kinds, faultHolders{kind: kind, a: r.Holder(d, string(kind)+"-A"), b: r.Holder(d, string(kind)+"-B")})
	}
	exp := startExporter(t, srv.Addr, collectors.FeedNotifications, namespaces)
	gap := &gapRecorder{exp: exp, stopped: map[string]bool{}}
	for i := range kinds {
		kinds[i].after = gap.scrape
	}
	for _, h := range kinds {
		p := handoffPrefix(h.kind)
		h.hold(p + "before")
		h.lapse(r, p+"lapsed-before")
		wantResult(t, "B acquires a lock it holds across the fault", h.b.Acquire(p+"across", longLease), clients.Acquired)
	}
	exp.scrape()

	gap.recording = true
	fc.inject(t, srv, admin)
	gap.scrape()
	for _, h := range kinds {
		h.hold(handoffPrefix(h.kind) + "during")
	}
	if fc.untilNoticed {
		gap.awaitStopped(t)
	}
	if fc.heal != nil {
		fc.heal(t, srv, admin)
	}
	gap.awaitFollowing(t)
	gap.recording = false

	for _, h := range kinds {
		p := handoffPrefix(h.kind)
		if h.kind != clients.Redlock { // redlock's release says whether the lock was still its own
			h.b.Extend(p+"across", longLease) // a lock the fault removed: the client's verdict
			h.after()
		}
		h.b.Release(p + "across")
		h.after()
		h.hold(p + "after")
		h.lapse(r, p+"lapsed-after")
	}
	got := exp.scrape()
	if err := r.Truth().Err(); err != nil {
		t.Errorf("the truth is not exact: %v", err)
	}
	for _, h := range kinds {
		t.Run(string(h.kind), func(t *testing.T) {
			checkFaulted(t, got[string(h.kind)], gap.stopped[string(h.kind)], r, clients.RedisKey(h.kind, handoffPrefix(h.kind)))
		})
	}
}

// checkFaulted: no counter above the truth, and counters short of it only where the gauge said
// the namespace was not followed.
func checkFaulted(t *testing.T, got lifecycle, stopped bool, r *clients.Runner, prefix string) {
	t.Helper()
	want := fromTruth(truthOf(r, prefix))
	t.Logf("exporter %s; truth %s; a scrape read following 0: %v", got.counts(), want.counts(), stopped)
	if over := got.exceeding(want); len(over) > 0 {
		t.Errorf("counted more than happened: %v\n  exporter %s\n  truth    %s\n%s", over, got.counts(), want.counts(), eventsOf(r, prefix))
	} else if got.counts() != want.counts() && !stopped {
		t.Errorf("counters short of the truth, and no scrape read lifecycle_following 0\n  exporter %s\n  truth    %s\n%s",
			got.counts(), want.counts(), eventsOf(r, prefix))
	}
	if got.following != 1 {
		t.Errorf("lifecycle_following %v after the exporter recovered, want 1", got.following)
	}
}
