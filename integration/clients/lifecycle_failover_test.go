package clients_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// sentinelPair is a master, its replica and a Sentinel watching them, both servers publishing
// keyspace notifications.
type sentinelPair struct {
	master, replica *redistest.Server
	sentinel        *redis.SentinelClient
	failover        *redis.Client // the exporter's view: whichever is master
}

const sentinelMaster = "locks"

func startSentinelPair(t *testing.T) *sentinelPair {
	t.Helper()
	notify := redistest.WithArgs("--notify-keyspace-events", notifyAll)
	master := redistest.Start(t, notify)
	host, port, _ := strings.Cut(master.Addr, ":")
	replica := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", notifyAll, "--replicaof", host, port))
	sentinel := redistest.StartSentinel(t, master, sentinelMaster)
	p := &sentinelPair{master: master, replica: replica,
		sentinel: redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr}),
		failover: redis.NewFailoverClient(&redis.FailoverOptions{MasterName: sentinelMaster, SentinelAddrs: []string{sentinel.Addr},
			ContextTimeoutEnabled: true, DisableIdentity: true})}
	t.Cleanup(func() { _ = p.sentinel.Close(); _ = p.failover.Close() })
	return p
}

// failOver has Sentinel promote the replica, once it knows the replica and the replica is in
// sync, and waits until the replica is master.
func (p *sentinelPair) failOver(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	waitUntil(t, "Sentinel to know the replica", func() bool {
		replicas, err := p.sentinel.Replicas(ctx, sentinelMaster).Result()
		return err == nil && len(replicas) == 1
	})
	replica := p.replica.Client(t)
	waitUntil(t, "the replica to be in sync", func() bool {
		info, err := replica.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	if err := p.sentinel.Failover(ctx, sentinelMaster).Err(); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(p.replica.Port())
	waitUntil(t, "the failover", func() bool {
		addr, err := p.sentinel.GetMasterAddrByName(ctx, sentinelMaster).Result()
		return err == nil && len(addr) == 2 && addr[1] == port
	})
	waitUntil(t, "a write on the new master", func() bool {
		return replica.Set(ctx, "elsewhere:after-failover", "x", time.Minute).Err() == nil
	})
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 60s waiting for %s", what)
		}
	}
}

// TestLifecycleSentinelFailover: behind Sentinel, every client holds and lapses locks on the
// master, one lock stays held across a failover, and clients of the new master hold and lapse
// locks during the exporter's resync and after it: no counter exceeds the clients' truth, and
// where the counters fall short of it a scrape during the failover read lifecycle_following 0.
func TestLifecycleSentinelFailover(t *testing.T) {
	p := startSentinelPair(t)
	var namespaces []collectors.Namespace
	for _, kind := range clients.Kinds() {
		ns, _ := lockNamespace(kind, handoffPrefix(kind))
		namespaces = append(namespaces, ns)
	}
	exp := startExporterOn(t, p.failover, collectors.FeedNotifications, namespaces)
	gap := &gapRecorder{exp: exp, stopped: map[string]bool{}}
	r := clients.NewRunner(t, p.replica.Addr) // waits for lapses on the new master
	var before, after []faultHolders
	for _, kind := range clients.Kinds() {
		d := clients.Start(t, kind, p.master.Addr)
		before = append(before, faultHolders{kind: kind, a: r.Holder(d, string(kind)+"-A"), b: r.Holder(d, string(kind)+"-B"), after: gap.scrape})
	}
	old := clients.NewRunner(t, p.master.Addr)
	for _, h := range before {
		pre := handoffPrefix(h.kind)
		h.hold(pre + "before")
		h.lapse(old, pre+"lapsed-before")
		wantResult(t, "B acquires a lock it holds across the failover", h.b.Acquire(pre+"across", longLease), clients.Acquired)
	}
	exp.scrape()

	gap.recording = true
	p.failOver(t)
	gap.scrape()
	for _, kind := range clients.Kinds() {
		d := clients.Start(t, kind, p.replica.Addr)
		h := faultHolders{kind: kind, a: r.Holder(d, string(kind)+"-C"), b: r.Holder(d, string(kind)+"-D"), after: gap.scrape}
		after = append(after, h)
		h.hold(handoffPrefix(kind) + "during")
	}
	gap.awaitFollowing(t)
	gap.recording = false

	for _, h := range after {
		pre := handoffPrefix(h.kind)
		h.hold(pre + "after")
		h.lapse(r, pre+"lapsed-after")
	}
	got := exp.scrape()
	if err := r.Truth().Err(); err != nil {
		t.Errorf("the truth is not exact: %v", err)
	}
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			checkFaulted(t, got[string(kind)], gap.stopped[string(kind)], r, clients.RedisKey(kind, handoffPrefix(kind)))
		})
	}
}
