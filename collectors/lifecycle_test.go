package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/faultproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// life is one namespace's lifecycle series as a scrape exports them.
type life struct {
	acq, takeovers, renewals, holds float64
	ends                            map[string]float64 // by reason
	following, endsByExpiry         float64
}

// lifecycleOf scrapes s and returns the lifecycle series by namespace; a namespace without
// lock_key_acquisitions_total is absent.
func lifecycleOf(t *testing.T, s *Scanner) map[string]life {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(s.Collector(context.Background())); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]life{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			ns := labels[nsLabel]
			l, ok := out[ns]
			if !ok {
				l.ends = map[string]float64{}
			}
			switch mf.GetName() {
			case "lock_key_acquisitions_total":
				l.acq = value(m)
			case "lock_key_takeovers_total":
				l.takeovers = value(m)
			case "lock_key_renewals_total":
				l.renewals = value(m)
			case "lock_key_ends_total":
				l.ends[labels["reason"]] = value(m)
			case "lock_key_hold_duration_seconds":
				l.holds = float64(m.GetHistogram().GetSampleCount())
			case "lock_exporter_lifecycle_following":
				l.following = value(m)
			case "lock_exporter_lifecycle_ends_by_expiry":
				l.endsByExpiry = value(m)
			default:
				continue
			}
			out[ns] = l
		}
	}
	return out
}

// endReasons are the reason label values, every one exported from 0.
var endReasons = []string{"deleted", "expired", "evicted", "overwritten", "unknown"}

// counts is the counters of a life, for comparison: acquisitions, takeovers, renewals, holds
// observed, and ends by reason.
func (l life) counts() string {
	s := fmt.Sprintf("acq=%v takeovers=%v renewals=%v holds=%v ends:", l.acq, l.takeovers, l.renewals, l.holds)
	for _, r := range endReasons {
		s += fmt.Sprintf(" %s=%v", r, l.ends[r])
	}
	return s
}

// ends builds a life's ends map from reason=count pairs, every other reason 0.
func ends(pairs ...any) map[string]float64 {
	out := map[string]float64{}
	for _, r := range endReasons {
		out[r] = 0
	}
	for i := 0; i < len(pairs); i += 2 {
		out[pairs[i].(string)] = float64(pairs[i+1].(int))
	}
	return out
}

// lifecycleNamespaces: string locks, a namespace whose holds end by expiry on purpose,
// Redisson's hash locks, and another namespace beside.
var lifecycleNamespaces = []Namespace{
	{Name: "jobs", Pattern: "jobs:*"},
	{Name: "reconcile", Pattern: "rec:*", EndsByExpiry: true},
	{Name: "redisson", Pattern: "rlock:*", Types: []string{TypeHash}},
	{Name: "other", Pattern: "other:*"},
}

// acquire is SET key value NX PX ttl, failing the test when the key is held.
func acquire(t *testing.T, c *redis.Client, key, value string, ttl time.Duration) {
	t.Helper()
	ok, err := c.SetNX(context.Background(), key, value, ttl).Result()
	if err != nil || !ok {
		t.Fatalf("SET %s NX: %v %v", key, ok, err)
	}
}

// awaitGone polls until Redis reports key gone (EXISTS 0: an expired key is reclaimed by the
// read).
func awaitGone(t *testing.T, c *redis.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := c.Exists(context.Background(), key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after 20s", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitIndexed waits until the index's entry of key satisfies ok (has: the index holds the
// key): the exporter's feed has re-read its change. A takeover written sooner after a lapse than
// that can merge with it into one reading, faster than the tracking feed's bound: it is then
// counted as less than happened.
func awaitIndexed(t *testing.T, s *Scanner, key string, ok func(e index.Entry, has bool) bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if e, has, built := indexedEntry(nodeOf(s), key); built && ok(e, has) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index did not follow its change in 20s", key)
		}
	}
}

// indexedWithExpiry matches an entry that holds the key with expiry at (ms), within the slack.
func indexedWithExpiry(at int64) func(index.Entry, bool) bool {
	return func(e index.Entry, has bool) bool {
		return has && e.ExpireAt >= at-index.ExpirySlack && e.ExpireAt <= at+index.ExpirySlack
	}
}

// notIndexed matches a key the index does not hold.
func notIndexed(_ index.Entry, has bool) bool { return !has }

// expiryOf is key's expiry on the server's clock (Unix ms).
func expiryOf(t *testing.T, c *redis.Client, key string) int64 {
	t.Helper()
	at, err := c.PExpireTime(context.Background(), key).Result()
	if err != nil || at <= 0 {
		t.Fatalf("PEXPIRETIME %s: %v %v", key, at, err)
	}
	return at.Milliseconds()
}

// redissonLock is Redisson's lock script: create or re-enter the holder's field, set the lease.
const redissonLock = `if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end;
return redis.call('pttl', KEYS[1]);`

// lifecycleCase is a TestLifecycleFromTheFeed case.
type lifecycleCase struct {
	name   string
	before func(t *testing.T, c *redis.Client)             // keys the build finds
	act    func(t *testing.T, c *redis.Client, s *Scanner) // scrapes with lifecycleOf
	want   map[string]life                                 // counters of the namespaces named; the others all 0
}

// lifecycleCases are the client histories TestLifecycleFromTheFeed plays.
func lifecycleCases() []lifecycleCase { return append(historyCases(), namespaceCases()...) }

// historyCases are lifecycle cases of one string lock's history.
func historyCases() []lifecycleCase {
	ctx := context.Background()
	return []lifecycleCase{
		{"acquired", nil, func(t *testing.T, c *redis.Client, _ *Scanner) {
			acquire(t, c, "jobs:a", "tok-1", time.Minute)
		}, map[string]life{"jobs": {acq: 1, ends: ends()}}},
		{"released", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "jobs:a", "tok-1", time.Minute)
			lifecycleOf(t, s)
			c.Del(ctx, "jobs:a")
		}, map[string]life{"jobs": {acq: 1, holds: 1, ends: ends("deleted", 1)}}},
		{"lapsed, then taken over, a scrape between", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "jobs:a", "tok-1", 300*time.Millisecond)
			lifecycleOf(t, s)
			awaitGone(t, c, "jobs:a")
			lifecycleOf(t, s)
			acquire(t, c, "jobs:a", "tok-2", time.Minute)
		}, map[string]life{"jobs": {acq: 2, takeovers: 1, holds: 1, ends: ends("expired", 1)}}},
		{"lapsed and taken over between two scrapes, the lapse read first", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "jobs:a", "tok-1", time.Second)
			awaitIndexed(t, s, "jobs:a", indexedWithExpiry(expiryOf(t, c, "jobs:a")))
			awaitGone(t, c, "jobs:a")
			awaitIndexed(t, s, "jobs:a", notIndexed)
			acquire(t, c, "jobs:a", "tok-2", time.Minute)
		}, map[string]life{"jobs": {acq: 2, takeovers: 1, holds: 1, ends: ends("expired", 1)}}},
		{"renewed", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "jobs:a", "tok-1", time.Minute)
			lifecycleOf(t, s)
			c.PExpire(ctx, "jobs:a", 2*time.Minute)
		}, map[string]life{"jobs": {acq: 1, renewals: 1, ends: ends()}}},
	}
}

// namespaceCases are lifecycle cases of namespace settings, types and keys found by the build.
func namespaceCases() []lifecycleCase {
	ctx := context.Background()
	return []lifecycleCase{
		{"ends by expiry on purpose: no takeover", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "rec:loop", "pod-1", 300*time.Millisecond)
			lifecycleOf(t, s)
			awaitGone(t, c, "rec:loop")
			awaitIndexed(t, s, "rec:loop", notIndexed)
			acquire(t, c, "rec:loop", "pod-2", time.Minute)
		}, map[string]life{"reconcile": {acq: 2, holds: 1, ends: ends("expired", 1)}}},
		{"the sweep ends an expiry once, Redis reclaiming the key later", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			acquire(t, c, "jobs:s", "tok-1", 300*time.Millisecond)
			lifecycleOf(t, s)
			testkit.AwaitServerTime(t, c, expiryOf(t, c, "jobs:s")+index.ExpirySlack+1) // untouched: not reclaimed
			lifecycleOf(t, s)
			awaitGone(t, c, "jobs:s")
		}, map[string]life{"jobs": {acq: 1, holds: 1, ends: ends("expired", 1)}}},
		{"Redisson: lock, re-entry renews, unlock", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			c.Eval(ctx, redissonLock, []string{"rlock:a"}, 30000, "uuid-1:7")
			lifecycleOf(t, s)
			c.Eval(ctx, redissonLock, []string{"rlock:a"}, 60000, "uuid-1:7")
			lifecycleOf(t, s)
			c.Del(ctx, "rlock:a")
		}, map[string]life{"redisson": {acq: 1, renewals: 1, holds: 1, ends: ends("deleted", 1)}}},
		{"keys the build found are no acquisitions; their ends count", func(t *testing.T, c *redis.Client) {
			acquire(t, c, "jobs:old", "tok-1", time.Minute)
			acquire(t, c, "rec:old", "pod-1", time.Minute)
			c.Eval(ctx, redissonLock, []string{"rlock:old"}, 30000, "uuid-1:7")
		}, func(t *testing.T, c *redis.Client, _ *Scanner) {
			c.Del(ctx, "jobs:old")
		}, map[string]life{"jobs": {ends: ends("deleted", 1)}}},
		{"other types and namespaces beside", nil, func(t *testing.T, c *redis.Client, s *Scanner) {
			c.RPush(ctx, "jobs:queue", "x")
			c.HSet(ctx, "jobs:hash", "f", "v")
			c.Set(ctx, "rlock:string", "v", time.Minute)
			c.Set(ctx, "elsewhere:a", "v", time.Minute)
			acquire(t, c, "other:a", "tok-1", time.Minute)
			lifecycleOf(t, s)
			c.Del(ctx, "jobs:queue", "jobs:hash", "rlock:string", "elsewhere:a")
		}, map[string]life{"other": {acq: 1, ends: ends()}}},
	}
}

// TestLifecycleFromTheFeed: acquisitions, ends by reason, takeovers, renewals and hold
// durations of every client's locks, counted from the index's change feed, through the
// exporter's metrics; keys the build found are not acquisitions, and other types and
// namespaces beside are not counted.
func TestLifecycleFromTheFeed(t *testing.T) {
	for _, tc := range lifecycleCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client(t)
			if tc.before != nil {
				tc.before(t, c)
			}
			s := indexed(t, c, lifecycleNamespaces)
			built := lifecycleOf(t, s)
			for _, ns := range lifecycleNamespaces {
				if l, ok := built[ns.Name]; !ok || l.counts() != (life{ends: ends()}).counts() || l.following != 1 {
					t.Fatalf("%s after the build (present %v): %s following=%v, want all 0, following 1", ns.Name, ok, l.counts(), l.following)
				}
			}
			tc.act(t, c, s)
			got := lifecycleOf(t, s)
			for _, ns := range lifecycleNamespaces {
				want, ok := tc.want[ns.Name]
				if !ok {
					want = life{ends: ends()}
				}
				l, ok := got[ns.Name]
				if !ok {
					t.Fatalf("no lifecycle series for %s", ns.Name)
				}
				if l.counts() != want.counts() {
					t.Errorf("%s: %s\nwant   %s", ns.Name, l.counts(), want.counts())
				}
				if l.following != 1 || l.endsByExpiry != boolGauge(ns.EndsByExpiry) {
					t.Errorf("%s: following %v ends_by_expiry %v, want 1 and %v", ns.Name, l.following, l.endsByExpiry, boolGauge(ns.EndsByExpiry))
				}
			}
		})
	}
}

// TestLifecycleFrozenWhileWalked: a namespace the key budget sends to the walk keeps its
// counters, frozen, with following 0, while its keys change; back in the index it follows
// again from where it stood. A namespace walked from the start has no lifecycle series.
func TestLifecycleFrozenWhileWalked(t *testing.T) {
	ctx := context.Background()
	const budget = 10
	srv := redistest.Start(t)
	c := srv.Client(t)
	namespaces := []Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}, {Name: "walked", Pattern: "*:w"}}
	s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeAuto, IndexKeyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	acquire(t, c, "a:0", "tok", time.Minute)
	if got := lifecycleOf(t, s); got["a"].acq != 1 || got["a"].following != 1 {
		t.Fatalf("a: %s following=%v, want 1 acquisition, following", got["a"].counts(), got["a"].following)
	}
	if _, ok := lifecycleOf(t, s)["walked"]; ok {
		t.Fatal("a namespace walked from the start has lifecycle series")
	}
	for i := 1; i <= 2*budget; i++ {
		c.Set(ctx, fmt.Sprintf("a:%d", i), "tok", time.Minute)
	}
	frozen := awaitMode(t, s, "a", modeWalk)
	for i := 1; i <= 5; i++ {
		c.Del(ctx, fmt.Sprintf("a:%d", i))
		c.Set(ctx, fmt.Sprintf("a:new:%d", i), "tok", time.Minute)
	}
	acquire(t, c, "b:0", "tok", time.Minute)
	got := lifecycleOf(t, s)
	if got["a"].counts() != frozen.counts() || got["a"].following != 0 {
		t.Errorf("a while walked: %s following=%v, want frozen at %s, following 0", got["a"].counts(), got["a"].following, frozen.counts())
	}
	if got["b"].acq != 1 || got["b"].following != 1 {
		t.Errorf("b beside: %s following=%v, want 1 acquisition, following", got["b"].counts(), got["b"].following)
	}
	keys, _ := c.Keys(ctx, "a:*").Result()
	c.Del(ctx, keys...)
	back := awaitMode(t, s, "a", modeIndex)
	if back.counts() != frozen.counts() || back.following != 1 {
		t.Errorf("a back in the index: %s following=%v, want %s (not reset, the build counted nothing), following 1", back.counts(), back.following, frozen.counts())
	}
	acquire(t, c, "a:again", "tok", time.Minute)
	if got := lifecycleOf(t, s)["a"]; got.acq != frozen.acq+1 {
		t.Errorf("a following again: %v acquisitions, want %v", got.acq, frozen.acq+1)
	}
}

// awaitMode scrapes until namespace ns is read in mode (and, for the index, current), and
// returns its lifecycle series then.
func awaitMode(t *testing.T, s *Scanner, ns, mode string) life {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := s.Scan(context.Background())
		for _, r := range res.Namespaces {
			if r.Namespace.Name == ns && r.Mode == mode && (mode == modeWalk || indexCurrent(s, res)) {
				return lifecycleOf(t, s)[ns]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not read by %s after 30s: %v", ns, mode, modes(res))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLifecycleFrozenWhileFeedLost: while the exporter cannot reach Redis (its connections
// reset), following is 0 and the counters stay as they were; what changed meanwhile is not
// counted by the rebuild, and the counters follow again from where they stood.
func TestLifecycleFrozenWhileFeedLost(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	acquire(t, c, "jobs:found", "tok", time.Minute)
	proxy := faultproxy.Start(t, srv.Addr)
	s := indexed(t, client(t, proxy.Addr), lifecycleNamespaces[:1])
	acquire(t, c, "jobs:a", "tok", time.Minute)
	before := lifecycleOf(t, s)["jobs"]
	if before.acq != 1 || before.following != 1 {
		t.Fatalf("before: %s following=%v, want 1 acquisition, following", before.counts(), before.following)
	}
	proxy.Reset()
	lost := lifecycleOf(t, s)["jobs"]
	if lost.counts() != before.counts() || lost.following != 0 {
		t.Errorf("feed lost: %s following=%v, want %s, following 0", lost.counts(), lost.following, before.counts())
	}
	c.Del(ctx, "jobs:found")
	acquire(t, c, "jobs:during", "tok", time.Minute)
	proxy.Heal()
	waitCurrent(t, s)
	after := lifecycleOf(t, s)["jobs"]
	if after.counts() != before.counts() || after.following != 1 {
		t.Errorf("rebuilt: %s following=%v, want %s, following 1", after.counts(), after.following, before.counts())
	}
	c.Del(ctx, "jobs:during")
	want := before
	want.ends = maps.Clone(before.ends)
	want.ends["deleted"]++
	if got := lifecycleOf(t, s)["jobs"]; got.counts() != want.counts() {
		t.Errorf("following again: %s, want %s", got.counts(), want.counts())
	}
}

// TestLifecycleHoldAges: a hold the feed saw begin gives its age to lock_key_held_seconds and
// lock_key_held_max_seconds for any client (no holder record); a hold that began before the
// index was built is omitted; the lease holder record, where present, stays the source.
func TestLifecycleHoldAges(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	acquire(t, c, "jobs:before-build", "tok", time.Minute)
	s, err := NewScanner(c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*", ExpectedMaxHold: time.Hour}}, Mode: ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	t0 := testkit.ServerNow(t, c)
	acquire(t, c, "jobs:redis-py", "tok", time.Minute)
	s.Scan(ctx) // the feed's re-read: the hold began between t0 and t1
	t1 := testkit.ServerNow(t, c)
	testkit.AwaitServerTime(t, c, t1+1000)
	got := gather(t, s.Collector(ctx))
	t2 := testkit.ServerNow(t, c)
	held := map[string]float64{}
	for _, sm := range got["lock_key_held_seconds"] {
		held[sm.labels["key"]] = sm.value
	}
	age, ok := held["jobs:redis-py"]
	if !ok || len(held) != 1 {
		t.Fatalf("lock_key_held_seconds for %v, want jobs:redis-py alone (the hold before the build omitted)", held)
	}
	if lo, hi := float64(1000)/1000, float64(t2-t0)/1000; age < lo || age > hi {
		t.Errorf("held %vs, want between %v and %v", age, lo, hi)
	}
	if v := only(t, got, "lock_key_held_max_seconds", "jobs"); v != age {
		t.Errorf("lock_key_held_max_seconds = %v, want %v", v, age)
	}
	c.Del(ctx, "jobs:redis-py")
	if got := gather(t, s.Collector(ctx)); len(got["lock_key_held_seconds"]) != 0 {
		t.Errorf("after the release: %v, want no hold", got["lock_key_held_seconds"])
	}
}

// TestLifecycleCluster: on a Cluster each master's feed counts its own keys, summed per
// namespace.
func TestLifecycleCluster(t *testing.T) {
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := clusterClient(t, cluster)
	s := indexed(t, cc, lifecycleNamespaces[:1])
	const locks = 30 // spread over the three masters' slots
	for i := range locks {
		if ok, err := cc.SetNX(ctx, fmt.Sprintf("jobs:%d", i), "tok", time.Minute).Result(); err != nil || !ok {
			t.Fatalf("SET NX: %v %v", ok, err)
		}
	}
	lifecycleOf(t, s)
	for i := range locks {
		cc.Del(ctx, fmt.Sprintf("jobs:%d", i))
	}
	if err := cc.SetNX(ctx, "jobs:lapse", "tok-1", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); cc.Exists(ctx, "jobs:lapse").Val() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("jobs:lapse did not expire")
		}
	}
	lifecycleOf(t, s) // the lapse read before the takeover, as the tracking feed's bound asks
	cc.SetNX(ctx, "jobs:lapse", "tok-2", time.Minute)
	got := lifecycleOf(t, s)["jobs"]
	want := life{acq: locks + 2, takeovers: 1, holds: locks + 1, ends: ends("deleted", locks, "expired", 1)}
	if got.counts() != want.counts() || got.following != 1 {
		t.Errorf("%s following=%v\nwant %s following=1", got.counts(), got.following, want.counts())
	}
}

// TestLifecycleSpacingBound measures, opt-in (LOCKWATCH_LIFECYCLE_SPACING=1), how far apart
// events on one key must be for the tracking feed to count every one, for several gaps:
//   - releases: rounds of SET NX PX then DEL, each event `gap` after the last; a DEL and the
//     next SET merged into one reading count as an unknown end and an acquisition (the holder
//     is read), or as a renewal or nothing without the holder read;
//   - lapses: rounds of SET NX PX 200ms left to lapse, and another holder's SET NX `gap` after
//     the expiry (by the server's clock); a lapse whose takeover may have come before the feed
//     read the key past its expiry counts as an unknown end (the holder is read), no takeover.
//
// It logs the counts against the truth, and fails if anything is invented.
func TestLifecycleSpacingBound(t *testing.T) {
	if os.Getenv("LOCKWATCH_LIFECYCLE_SPACING") == "" {
		t.Skip("measurement: set LOCKWATCH_LIFECYCLE_SPACING=1")
	}
	gaps := []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	t.Run("releases", func(t *testing.T) {
		for _, gap := range gaps {
			spacedReleases(t, gap)
		}
	})
	t.Run("lapses", func(t *testing.T) {
		for _, gap := range gaps {
			spacedLapses(t, gap)
		}
	})
}

// spacingRounds is how many rounds TestLifecycleSpacingBound plays per gap.
const spacingRounds = 40

// spacedReleases plays TestLifecycleSpacingBound's release rounds at gap.
func spacedReleases(t *testing.T, gap time.Duration) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	s := indexed(t, c, lifecycleNamespaces[:1])
	for i := range spacingRounds {
		acquire(t, c, "jobs:spaced", fmt.Sprintf("tok-%d", i), time.Minute)
		time.Sleep(gap)
		c.Del(ctx, "jobs:spaced")
		time.Sleep(gap)
	}
	got := lifecycleOf(t, s)["jobs"]
	other := got.ends["expired"] + got.ends["overwritten"] + got.ends["evicted"]
	t.Logf("gap %v: acquisitions %v/%d, deleted %v/%d, unknown %v, renewals %v, other ends %v", gap, got.acq, spacingRounds, got.ends["deleted"], spacingRounds,
		got.ends["unknown"], got.renewals, other)
	// A release and the next acquisition merged into one reading, the holder read, are an
	// unknown end (the release) and an acquisition: no more than happened.
	if got.acq > spacingRounds || got.ends["deleted"]+got.ends["unknown"] > spacingRounds || got.takeovers > 0 || other > 0 {
		t.Errorf("gap %v: counted more than happened", gap)
	}
}

// spacedLapses plays TestLifecycleSpacingBound's lapse rounds at gap: each round's lock, once
// the feed read it, lapses and is taken over gap after its expiry, then released (a deleted end)
// once the feed read the takeover; the next round begins once the feed read the release.
func spacedLapses(t *testing.T, gap time.Duration) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	s := indexed(t, c, lifecycleNamespaces[:1])
	const key = "jobs:lapsing"
	for i := range spacingRounds {
		// Each round begins just after a drain: spread the expiries over the feed interval,
		// or every round would meet the drains at the same phase.
		time.Sleep(time.Duration(i%10) * index.FeedInterval / 10)
		acquire(t, c, key, fmt.Sprintf("tok-%d", i), 200*time.Millisecond)
		expireAt := expiryOf(t, c, key)
		awaitIndexed(t, s, key, indexedWithExpiry(expireAt))
		testkit.AwaitServerTime(t, c, expireAt+gap.Milliseconds())
		acquire(t, c, key, fmt.Sprintf("next-%d", i), time.Minute)
		awaitIndexed(t, s, key, indexedWithExpiry(expiryOf(t, c, key)))
		c.Del(ctx, key)
		awaitIndexed(t, s, key, notIndexed)
	}
	got := lifecycleOf(t, s)["jobs"]
	t.Logf("gap %v: expired %v/%d, takeovers %v/%d, unknown %v, renewals %v, acquisitions %v/%d, deleted %v/%d", gap, got.ends["expired"], spacingRounds,
		got.takeovers, spacingRounds, got.ends["unknown"], got.renewals, got.acq, 2*spacingRounds, got.ends["deleted"], spacingRounds)
	if got.ends["expired"] > spacingRounds || got.takeovers > spacingRounds || got.acq > 2*spacingRounds || got.ends["deleted"] > spacingRounds || got.ends["overwritten"]+got.ends["evicted"] > 0 {
		t.Errorf("gap %v: counted more than happened", gap)
	}
}

// handoff releases key and lets holder acquire it in one MULTI: the change feed names the key
// once, so only the holder read tells the handoff from a renewal.
func handoff(t *testing.T, c *redis.Client, key string, acquireBy func(pipe redis.Pipeliner)) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Del(ctx, key)
		acquireBy(pipe)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) { // Redisson's lock script answers nil
		t.Fatal(err)
	}
}

// TestLifecycleHolderRead: where the ACL grants the holder read (GETRANGE on string locks,
// HSCAN on hash locks), a release and another holder's acquisition that the feed names once
// count as an end and an acquisition, not as a renewal; without the grant nothing fails, the
// node logs one INFO line and counts what it can (a renewal). No holder reaches the log.
func TestLifecycleHolderRead(t *testing.T) {
	ctx := context.Background()
	namespaces := []Namespace{{Name: "jobs", Pattern: "jobs:*"}, {Name: "redisson", Pattern: "rlock:*", Types: []string{TypeHash}}}
	handoffs := func(t *testing.T, c *redis.Client, s *Scanner) {
		acquire(t, c, "jobs:a", "token-of-a", time.Minute)
		c.Eval(ctx, redissonLock, []string{"rlock:a"}, 30000, "uuid-1:7")
		lifecycleOf(t, s)
		handoff(t, c, "jobs:a", func(pipe redis.Pipeliner) { pipe.SetNX(ctx, "jobs:a", "token-of-b", 2*time.Minute) })
		handoff(t, c, "rlock:a", func(pipe redis.Pipeliner) {
			pipe.Eval(ctx, redissonLock, []string{"rlock:a"}, 60000, "uuid-2:9")
		})
	}
	cases := []struct {
		name    string
		acl     []string // the exporter's user's rules; nil: the default user
		want    life
		logLine bool
	}{
		{"granted", nil, life{acq: 2, holds: 1, ends: ends("unknown", 1)}, false},
		{"the documented least-privilege ACL", []string{}, life{acq: 1, renewals: 1, ends: ends()}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			admin := srv.Client(t)
			c := admin
			if tc.acl != nil {
				testkit.SetACL(t, srv, testkit.DocumentedACL(t, aclPassword))
				c = redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: aclPassword, DisableIdentity: true})
				t.Cleanup(func() { _ = c.Close() })
			}
			var log testkit.SyncBuffer
			s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeAuto, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			waitCurrent(t, s)
			handoffs(t, admin, s)
			got := lifecycleOf(t, s)
			for _, ns := range []string{"jobs", "redisson"} {
				if got[ns].counts() != tc.want.counts() || got[ns].following != 1 {
					t.Errorf("%s: %s following=%v\nwant   %s following=1", ns, got[ns].counts(), got[ns].following, tc.want.counts())
				}
			}
			lines := strings.Count(log.String(), index.HolderReadOffMessage)
			if tc.logLine && lines != 1 || !tc.logLine && lines != 0 {
				t.Errorf("%d lines %q, want %v:\n%s", lines, index.HolderReadOffMessage, tc.logLine, log.String())
			}
			for _, secret := range []string{"token-of-a", "token-of-b", "uuid-1", "uuid-2"} {
				if strings.Contains(log.String(), secret) {
					t.Errorf("the log holds a holder (%s):\n%s", secret, log.String())
				}
			}
		})
	}
}

// TestLifecycleSwapDB: keys written to another database and swapped in by one MULTI are named by
// the feed after the swap, and their re-reads find them in the database the exporter reads; no
// feed reports a SWAPDB, only the identity check that follows does: the counts made meanwhile
// are discarded, never exported.
func TestLifecycleSwapDB(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	s := indexed(t, c, lifecycleNamespaces[:1])
	swapper := srv.Client(t) // its connection ends in database 1
	if _, err := swapper.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Select(ctx, 1)
		for i := range 20 {
			pipe.Set(ctx, fmt.Sprintf("jobs:swapped:%d", i), "tok", time.Minute)
		}
		pipe.SwapDB(ctx, 0, 1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = swapper.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := s.Scan(ctx)
		if got := lifecycleOf(t, s)["jobs"]; got.counts() != (life{ends: ends()}).counts() {
			t.Fatalf("after SWAPDB: %s, want nothing counted", got.counts())
		}
		if res.IndexResyncs[index.ResyncSwapDB] > 0 && indexCurrent(s, res) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no swapdb resync: %v", res.IndexResyncs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	acquire(t, c, "jobs:after", "tok", time.Minute)
	if got := lifecycleOf(t, s)["jobs"]; got.acq != 1 {
		t.Errorf("after the resync: %s, want 1 acquisition", got.counts())
	}
}
