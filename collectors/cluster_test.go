package collectors

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestCluster scans a real three-master Redis Cluster: every master's keys are counted once, the
// top-K is merged across masters, the key cap holds across masters, and a dead master turns the
// exporter down by the deadline. Holder keys, each in its lock's slot, are read from whichever
// master holds them.
func TestCluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 cluster.Addrs(),
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialerRetries:         1,
		DisableIdentity:       true,
	})
	t.Cleanup(func() { _ = cc.Close() })
	seed := newSeeder(t, cc)

	const n = 60
	masters := map[string]bool{}
	for i := range n {
		key := fmt.Sprintf("job:%d", i)
		ttl := time.Minute
		if i%10 == 0 {
			ttl = 0
		}
		// Idle times 10s apart: the keys live on three servers, each with its own LRU clock of
		// one-second resolution, so neighbours 1s apart can tie or swap on a loaded machine.
		seed.key(t, key, ttl, 100+10*i) // job:59 is the stalest, idle 690s
		masters[cluster.MasterFor(t, key).Addr] = true
	}
	if len(masters) < 3 {
		t.Fatalf("seeded keys landed on %d masters, want all 3", len(masters))
	}
	holders := map[string]string{"job:59": "worker-59 pid 1", "job:57": "worker-57 pid 2"}
	for key, holder := range holders {
		if err := cc.Set(t.Context(), lockkeys.Holder(key), holder, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if cluster.MasterFor(t, "job:59").Addr == cluster.MasterFor(t, "job:57").Addr {
		t.Logf("job:59 and job:57 share a master; holders are still read through the slot map")
	}

	s := newTestScanner(t, cc, Options{Namespaces: []Namespace{{Name: "job", Pattern: "job:*"}}, TopK: 3, BatchSize: 7})
	res := scanWithin(t, s, 5*time.Second)
	ns := res.Namespaces[0]
	if !res.Up || !ns.Complete || ns.Keys != n || ns.KeysWithoutTTL != n/10 {
		t.Fatalf("up=%v complete=%v keys=%d withoutTTL=%d err=%v, want %d keys, %d without TTL",
			res.Up, ns.Complete, ns.Keys, ns.KeysWithoutTTL, res.Err, n, n/10)
	}
	if got := keysOf(ns.Stalest); got != "job:59 job:58 job:57" {
		t.Errorf("stalest = %q, want job:59 job:58 job:57", got)
	}
	for _, k := range ns.Stalest {
		if k.Holder != holders[k.Key] {
			t.Errorf("holder of %s = %q, want %q", k.Key, k.Holder, holders[k.Key])
		}
	}
	if ns.MaxIdle < 689*time.Second || ns.MaxIdle > 695*time.Second {
		t.Errorf("max idle = %v, want ~690s", ns.MaxIdle)
	}

	capped := newTestScanner(t, cc, Options{Namespaces: []Namespace{{Name: "job", Pattern: "job:*"}}, MaxKeys: 25, BatchSize: 5})
	if ns := scanWithin(t, capped, 5*time.Second).Namespaces[0]; ns.Keys != 25 || !ns.Truncated {
		t.Errorf("capped across masters: keys=%d truncated=%v, want 25 and truncated", ns.Keys, ns.Truncated)
	}

	cluster.MasterFor(t, "job:0").Kill()
	start := time.Now()
	res = scanWithin(t, s, 2*time.Second)
	if res.Up || res.Err == nil {
		t.Errorf("with a master killed: up=%v err=%v, want down", res.Up, res.Err)
	}
	if elapsed := time.Since(start); elapsed > 2300*time.Millisecond {
		t.Errorf("scan with a master killed took %v, deadline 2s", elapsed)
	}
}
