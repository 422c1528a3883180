package drills

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/lease"
)

// TestClusterReshard moves the slot of a namespace's locks to another master while workers
// acquire, write fenced and release them, and other leases are held and renewed, the way
// `redis-cli --cluster reshard` moves a large slot: 10 keys per MIGRATE, 3,000 other keys in the
// slot. For moments a lock key and its fence or holder key are on different masters, and Redis answers a
// script on both TRYAGAIN (or ASK, when go-redis' redirects run out); the drill checks that it
// met such replies. Every acquire, fenced write and release succeeds, and the held leases keep
// their keys. Before, an acquire that met TRYAGAIN or ASK failed (125 failed acquires in about
// 30,000 cycles during a one-second move).
func TestClusterReshard(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	defer checkLeaks(t)()
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		ClusterStateReloadInterval: time.Second})
	defer cc.Close()
	var moving atomic.Int64 // replies of the nodes that say a slot is moving
	cc.OnNewNode(func(rdb *redis.Client) { rdb.AddHook(slotMovingCounter{n: &moving}) })
	c, err := lease.New(cc, lease.Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	// A lock whose key has moved and whose fence key has not yet (or the other way round) is
	// answered TRYAGAIN until the move reaches the other: an acquire waits that out, up to its
	// AcquireTimeout. The move takes about a second on an idle machine and took 6 s beside
	// 2 × nproc CPU hogs, so the timeout is well above any move this drill makes.
	ns, err := c.Declare("jobs", lease.Policy{TTL: 2 * time.Second, RenewInterval: 200 * time.Millisecond,
		RenewTimeout: 150 * time.Millisecond, MaxRenewFailures: 3, AcquireTimeout: 30 * time.Second,
		RetryBackoff: 20 * time.Millisecond, Fencing: true, RecordHolder: true})
	if err != nil {
		t.Fatal(err)
	}
	const tag = "{drill-reshard}"
	pipe := cc.Pipeline()
	for i := range 3000 {
		pipe.Set(ctx, fmt.Sprintf("%s:other:%d", tag, i), "x", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var held []*lease.Lease
	for i := range 5 {
		l, err := ns.Acquire(ctx, fmt.Sprintf("%s:held:%d", tag, i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var cycles atomic.Int64
	var failMu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := (w*7 + i) % 10
				l, err := ns.Acquire(ctx, fmt.Sprintf("%s:job:%d", tag, n))
				if err != nil {
					fail("acquire: %v", err)
					continue
				}
				// One data key per lock: its fences rise from holder to holder, so every write
				// of a holder is accepted.
				if err := ns.FencedSet(ctx, l.Key(), l.Fence(), fmt.Sprintf("%s:data:%d", tag, n), "v", 0); err != nil {
					fail("fenced write: %v", err)
				}
				if err := l.Release(ctx); err != nil {
					fail("release: %v", err)
				}
				cycles.Add(1)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	from := cl.MasterFor(t, tag)
	var to *redistest.Server
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
		}
	}
	start := time.Now()
	cl.MigrateSlotSlowly(t, cl.Slot(t, tag), to, 10, 2*time.Millisecond)
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	for _, l := range held {
		if err := context.Cause(l.Context()); err != nil {
			t.Errorf("held lease %s ended during the reshard: %v", l.Key(), err)
		} else if err := l.Release(ctx); err != nil {
			t.Errorf("release of held lease %s: %v", l.Key(), err)
		}
	}
	t.Logf("the slot moved in %v; %d worker cycles; %d replies said the slot was moving", took, cycles.Load(), moving.Load())
	if moving.Load() == 0 {
		t.Error("no command met the move (TRYAGAIN, ASK or MOVED): the drill did not test it")
	}
	for _, f := range failures[:min(len(failures), 10)] {
		t.Error(f)
	}
	if len(failures) > 10 {
		t.Errorf("… %d failures in all", len(failures))
	}
}

// slotMovingCounter counts the replies of a node that say the command's slot is moving.
type slotMovingCounter struct {
	redishook.PassThrough
	n *atomic.Int64
}

func (h slotMovingCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(cmd)
		return err
	}
}

func (h slotMovingCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.count(cmd)
		}
		return err
	}
}

func (h slotMovingCounter) count(cmd redis.Cmder) {
	err := cmd.Err()
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	if moved || ask || redis.IsTryAgainError(err) {
		h.n.Add(1)
	}
}
