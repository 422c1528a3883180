package wire

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/redis/go-redis/v9"
)

// sendCounter counts how the lock commands (SET, EVALSHA, EVAL) of a go-redis client are sent:
// on their own (ProcessHook) or as pipelines, with the commands each pipeline carried; the
// client's own connection set-up is not counted. While holding is set, a lock command sent on
// its own waits at the gate until open is closed.
type sendCounter struct {
	redishook.PassThrough
	singles   atomic.Int64
	pipelines atomic.Int64
	piped     atomic.Int64

	// While holding, lock commands sent on their own wait for a receive from open: one is let
	// through per value sent.
	holding atomic.Bool
	open    chan struct{}
}

func (h *sendCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isLockCommand(cmd) {
			return next(ctx, cmd)
		}
		h.singles.Add(1)
		if h.holding.Load() {
			<-h.open
		}
		return next(ctx, cmd)
	}
}

func (h *sendCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, isLockCommand) {
			h.pipelines.Add(1)
			h.piped.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

func isLockCommand(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "set", "evalsha", "eval":
		return true
	}
	return false
}

// The Sender sends a lone caller's command at once, on its own, and the commands of callers
// that arrive while the cap on sends is reached together, as one pipeline sent by one of them.
// Causally: the commands on the wire are held at a gate until the others are queued, and let
// through one at a time, so the batch they form does not depend on timing.
func TestSenderSendsWaitingCommandsTogether(t *testing.T) {
	counter := &sendCounter{open: make(chan struct{})}
	sender := newTestSender(t, sharedAddr, counter)
	ctx := context.Background()
	// Warm up: the first script call may meet NOSCRIPT and be sent again as EVAL.
	if err := setAndDelete(ctx, sender, uniqueKey(t)); err != nil {
		t.Fatal(err)
	}
	counter.singles.Store(0)

	for range 3 {
		if err := setAndDelete(ctx, sender, uniqueKey(t)); err != nil {
			t.Fatal(err)
		}
	}
	if s, p := counter.singles.Load(), counter.pipelines.Load(); s != 6 || p != 0 {
		t.Fatalf("a lone caller's 3 cycles sent %d commands on their own and %d pipelines, want 6 and 0", s, p)
	}

	slots := sendCap(sender)
	const waiting = 8
	counter.singles.Store(0)
	counter.holding.Store(true)
	var wg sync.WaitGroup
	var answered atomic.Int64
	set := func() {
		wg.Go(func() {
			if ok, err := setNX(ctx, sender, uniqueKey(t)); err != nil || !ok {
				t.Errorf("SET NX of a fresh key = %v, %v; want true", ok, err)
				return
			}
			answered.Add(1)
		})
	}
	for range slots {
		set()
	}
	waitFor(t, "the cap on sends to be reached", func() bool { return counter.singles.Load() == int64(slots) })
	for range waiting {
		set()
	}
	waitFor(t, "the other callers to queue", func() bool { return queued(sender) == waiting })
	// Answer the sends one at a time, the second only once the first one's batch is on the
	// wire. Answered together, each freed place would go to a waiting caller of its own and the
	// queue would split between two leaders: correct, but not the single batch this test is
	// about.
	counter.holding.Store(false)
	counter.open <- struct{}{}
	waitFor(t, "the waiting commands' pipeline", func() bool { return counter.pipelines.Load() > 0 })
	counter.open <- struct{}{}
	wg.Wait()

	if s := counter.singles.Load(); s != int64(slots) {
		t.Errorf("%d commands sent on their own, want %d (the cap)", s, slots)
	}
	if p, c := counter.pipelines.Load(), counter.piped.Load(); p != 1 || c != waiting {
		t.Errorf("%d pipelines carrying %d commands, want the %d waiting commands in one", p, c, waiting)
	}
	if a := answered.Load(); a != int64(slots+waiting) {
		t.Errorf("%d callers had their command's reply, want all %d", a, slots+waiting)
	}
}

// Against a frozen Redis, every caller of a pipeline returns at its own deadline: not before it
// (no other caller's shorter deadline cuts its command) and not long after it (no leader waits
// for a later caller's command). Callers with short and long deadlines arrive together, more of
// them than the cap on sends, so most are queued and sent in pipelines. Short-deadline callers
// go out first: were the places on the wire held by the callers with the latest deadline,
// every queued caller would give up before a place freed, and nothing would be pipelined.
func TestSenderHonoursEachCallersDeadline(t *testing.T) {
	srv := redistest.Start(t)
	counter := &sendCounter{open: make(chan struct{})}
	sender := newTestSender(t, srv.Addr, counter)
	stalls := stallMeter(t)

	calls := deadlineCalls(t, sender)
	shortest := slices.MinFunc(calls, func(a, b deadlineCall) int { return cmp.Compare(a.bound, b.bound) }).bound
	var first, rest []deadlineCall
	for _, c := range calls {
		if c.bound == shortest && len(first) < sendCap(sender) {
			first = append(first, c)
		} else {
			rest = append(rest, c)
		}
	}
	check := func(c deadlineCall, took time.Duration, _ error) {
		if slack := stalls.Slack(callSlack); took > c.bound+slack {
			t.Errorf("%s returned after %s, want at most its deadline %s (+ %s slack for the stalls seen)", c.name, took, c.bound, slack)
		}
	}

	counter.singles.Store(0)
	srv.Pause()
	defer srv.Resume()
	firstReturned := startDeadlineCalls(t, first, check)
	waitFor(t, "the shortest-deadline callers to reach the cap on sends", func() bool { return counter.singles.Load() == int64(len(first)) })
	<-startDeadlineCalls(t, rest, check)
	<-firstReturned
	if counter.pipelines.Load() == 0 {
		t.Error("no pipeline was sent: the callers were not queued, the test proves nothing")
	}
}

// Callers that never find the cap reached never queue: as many concurrent callers as the cap,
// each cycling in turn, send every command on its own and no pipeline. Queues form only while
// sends wait.
func TestUnhurriedCallersSendAlone(t *testing.T) {
	counter := &sendCounter{}
	sender := newTestSender(t, sharedAddr, counter)
	if err := setAndDelete(context.Background(), sender, uniqueKey(t)); err != nil {
		t.Fatal(err)
	}
	counter.singles.Store(0) // the warm-up's script may have met NOSCRIPT and been sent again as EVAL
	workers := sendCap(sender)
	const cycles = 20 // 2 × workers × cycles commands: far from a window's end, so the cap stays
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			key := uniqueKey(t)
			for range cycles {
				if err := setAndDelete(context.Background(), sender, key); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if s, p := counter.singles.Load(), counter.pipelines.Load(); s != int64(2*workers*cycles) || p != 0 {
		t.Errorf("%d commands on their own and %d pipelines, want %d and 0", s, p, 2*workers*cycles)
	}
}
