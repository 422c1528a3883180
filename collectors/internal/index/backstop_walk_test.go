package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// backstopByHand paces a node's backstop walk fast and spaces its walks an hour apart: the
// test runs the one it needs itself (n.backstop).
func backstopByHand(o *Options) {
	o.BackstopKeysPerSecond = 1_000_000
	o.BackstopEvery = time.Hour
}

// driftIndex changes n's index as a feed that missed messages would have left it: f runs on the
// index with syncMu held, as a drain does.
func driftIndex(n *Node, f func(idx *KeyIndex)) {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	f(n.idx)
}

// TestIndexBackstopCorrectsDrift: entries the feed could have missed (a key lost, a key that is
// gone, a wrong expiry, a lost fence key) are corrected and counted by one backstop walk.
func TestIndexBackstopCorrectsDrift(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	for i := range 300 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(60+i)*time.Second)
		c.Set(ctx, fmt.Sprintf("other:%d", i), "x", 0)
	}
	c.Incr(ctx, lockkeys.Fence("jobs:1"))
	o := testNodeOptions(nodeTestNamespaces, backstopByHand)
	n := startNode(t, c, o)

	driftIndex(n, func(idx *KeyIndex) {
		idx.Remove("jobs:7")                               // missed: a new key
		idx.Set("jobs:ghost", Entry{Mask: 1, ExpireAt: 0}) // missed: a deletion
		e, _ := idx.Get("jobs:8")
		e.ExpireAt += 5000 // missed: a renewal
		idx.Set("jobs:8", e)
		idx.Remove(lockkeys.Fence("jobs:1")) // missed: a fence key
	})
	if len(servedDifferences(t, n, c, o)) == 0 {
		t.Fatal("the injected drift does not show: the test cannot fail")
	}
	n.backstop(ctx)
	if got := n.Counts(); got.Corrections != 4 || got.Backstops != 1 {
		t.Fatalf("backstop: %d corrections in %d walks, want 4 in 1", got.Corrections, got.Backstops)
	}
	matchesWalk(t, n, c, o, "backstop")
}

// TestIndexBackstopNoFalseCorrections: keys changing while the backstop walks past them are
// the feed's, not corrections.
func TestIndexBackstopNoFalseCorrections(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	for i := range 2000 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(60+i%100)*time.Second)
	}
	o := testNodeOptions(nodeTestNamespaces, func(o *Options) {
		o.BackstopKeysPerSecond, o.BackstopEvery = 5000, time.Hour // slow enough to be overtaken
	})
	n := startNode(t, c, o)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(2, 3))
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprintf("jobs:%d", rng.IntN(2500))
			switch rng.IntN(4) {
			case 0:
				c.Del(ctx, k)
			case 1:
				c.Set(ctx, k, "t", time.Minute)
			case 2:
				c.PExpire(ctx, k, time.Duration(30+rng.IntN(60))*time.Second)
			case 3:
				c.Incr(ctx, lockkeys.Fence(k))
			}
		}
	})
	n.backstop(ctx)
	close(stop)
	wg.Wait()
	if got := n.Counts(); got.Corrections != 0 || got.Backstops != 1 {
		t.Fatalf("backstop under churn: %d corrections in %d walks, want 0 in 1", got.Corrections, got.Backstops)
	}
	matchesWalk(t, n, c, o, "backstop under churn")
}

// TestIndexBackstopJudgesTheFeed: a backstop walk that had to correct the index means a
// keyspace-notifications feed went silent (notifications name every change of a lock key, so
// switched off where CONFIG GET cannot tell, say): the node resyncs (notifications_off). Client
// tracking's corrections are only counted.
func TestIndexBackstopJudgesTheFeed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		feed    FeedKind
		resyncs int64
	}{
		{"notifications", FeedKindNotifications, 1},
		{"tracking", FeedKindTracking, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA")).Client(t)
			c.Set(ctx, "jobs:1", "t", time.Minute)
			o := testNodeOptions(nodeTestNamespaces, func(o *Options) {
				backstopByHand(o)
				o.Feed = tc.feed
			})
			n := startNode(t, c, o)
			if notifications := n.Inspect().Notifications; notifications != (tc.feed == FeedKindNotifications) {
				t.Fatalf("follows notifications: %v, want the %s feed", notifications, tc.name)
			}
			driftIndex(n, func(idx *KeyIndex) { idx.Remove("jobs:1") }) // a change the feed missed
			n.backstop(ctx)
			if got := n.Counts().Corrections; got != 1 {
				t.Fatalf("backstop: %d corrections, want 1", got)
			}
			if tc.resyncs > 0 {
				awaitNodeResyncs(t, n, ResyncNotificationsOff, tc.resyncs)
			}
			if got := n.Counts().Resyncs[ResyncNotificationsOff]; got != tc.resyncs {
				t.Errorf("%d %s resyncs, want %d", got, ResyncNotificationsOff, tc.resyncs)
			}
			matchesWalk(t, n, c, o, "the backstop's judgement")
		})
	}
}

// TestIndexBackstopReadsFenceExpiry: fence keys a backstop walk brings into the index are held
// with their expiry, so once expired they are not counted, whatever Redis has not reclaimed yet.
// Fence keys were indexed without their expiry: after 1000 of them expired the index still
// counted 998 to 1000, where a walk read 0.
func TestIndexBackstopReadsFenceExpiry(t *testing.T) {
	const (
		expiring  = 1000
		unrelated = 40000 // not due: Redis's active expiry finds few of the expired keys per cycle
	)
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	pipe := c.Pipeline()
	for i := range unrelated {
		pipe.Set(ctx, fmt.Sprintf("other:%d", i), "x", time.Hour)
	}
	for i := range expiring {
		key := fmt.Sprintf("jobs:%d", i)
		pipe.Set(ctx, key, "token", 4*time.Second)
		pipe.Set(ctx, lockkeys.Fence(key), i, 4*time.Second)
	}
	written := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := testNodeOptions(nodeTestNamespaces, backstopByHand)
	n := startNode(t, c, o)
	driftIndex(n, func(idx *KeyIndex) {
		for i := range expiring {
			idx.Remove(lockkeys.Fence(fmt.Sprintf("jobs:%d", i)))
		}
	})
	n.backstop(ctx)
	if got := n.Counts().Corrections; got != expiring {
		t.Fatalf("backstop: %d corrections, want %d", got, expiring)
	}
	if got := scrapeIndex(t, n).Results[0].FenceKeys; got != expiring {
		t.Fatalf("before the expiry the index holds %d fence keys, want %d: the keys expired before the test could look", got, expiring)
	}
	testkit.AwaitServerTime(t, c, written.Val().Add(4*time.Second).UnixMilli())
	served := scrapeIndex(t, n)
	if size := c.DBSize(ctx).Val(); size < unrelated+expiring {
		t.Fatalf("DBSIZE %d: Redis reclaimed most expired keys already; the test cannot fail", size)
	}
	for _, ns := range served.Results {
		if ns.Keys != 0 || ns.FenceKeys != 0 {
			t.Errorf("%s after every key expired: %d keys, %d fence keys; want 0 and 0", ns.Namespace.Name, ns.Keys, ns.FenceKeys)
		}
	}
	matchesWalk(t, n, c, o, "the expiry")
}
