package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// env is one test's view of Redis: its own go-redis client (so hooks stay local), its own
// registry and a lease Client on both.
type env struct {
	rdb  *redis.Client
	reg  *prometheus.Registry
	c    *Client
	logs *testkit.SyncBuffer
}

func newEnv(t testing.TB, addr string, hooks ...redis.Hook) *env {
	t.Helper()
	return newEnvMode(t, addr, false, hooks...)
}

// newEnvMode is newEnv on the single-command baseline when single is set: every command sent on
// its own, as on a Cluster client. The Client is closed at the end of the test, before its
// go-redis client.
func newEnvMode(t testing.TB, addr string, single bool, hooks ...redis.Hook) *env {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, h := range hooks {
		rdb.AddHook(h)
	}
	e := &env{rdb: rdb, reg: prometheus.NewRegistry(), logs: &testkit.SyncBuffer{}}
	c, err := New(rdb, Options{
		Registerer: e.reg,
		Logger:     slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if single {
		sendAlone(c)
	}
	t.Cleanup(func() { _ = c.Close() })
	e.c = c
	return e
}

// eachMode runs body once with the default client (the adaptive sender) and once on the
// single-command baseline: the library's guarantees must not depend on how its commands reach
// Redis.
func eachMode(t *testing.T, body func(t *testing.T, single bool)) {
	for _, single := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "single"}[single], func(t *testing.T) {
			body(t, single)
		})
	}
}

// sendAlone puts c on the single-command baseline: every command on its own, one round trip
// each, as on a Cluster client.
func sendAlone(c *Client) { c.send = wire.NewSingleSender(c.rdb) }

func (e *env) namespace(t testing.TB, name string, p Policy) *Namespace {
	t.Helper()
	n, err := e.c.Declare(name, p)
	if err != nil {
		t.Fatalf("Declare(%q): %v", name, err)
	}
	return n
}

// metric returns the value of the series name{labels} in e's registry: a counter's or
// gauge's value, or a histogram's sample count. labels alternate name and value.
func (e *env) metric(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	return testkit.MetricValue(t, e.reg, name, labels...)
}

// wantMetrics asserts several series of namespace ns at once: keys are "name" or
// "name/outcome".
func (e *env) wantMetrics(t testing.TB, ns string, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		name, outcome, hasOutcome := strings.Cut(series, "/")
		labels := []string{namespaceLabel, ns}
		if hasOutcome {
			labels = append(labels, "outcome", outcome)
		}
		if got := e.metric(t, name, labels...); got != v {
			t.Errorf("%s{lock_namespace=%q} = %v, want %v", series, ns, got, v)
		}
	}
}

// callSlack is the fixed part of the slack of a bounded call's wall-clock check. Under the race
// detector, with a fraction of a core, a call path can overrun its bound by hundreds of
// milliseconds while the stall meter's own timer stays punctual (seen: an Acquire 560ms over
// its 150ms bound, with a worst stall of 32ms, beside stress-ng --cpu 4 at a load of 13). The
// failures these checks catch overrun by seconds: go-redis's retries of a read timeout (about
// 10s), a call that waits for a frozen Redis (for ever).
const callSlack = time.Second

// stallMeter measures the process's scheduling stalls for the rest of the test. Wall-clock
// upper bounds take their slack from it, m.Slack(callSlack), so that a starved machine widens
// them by what the test saw instead of failing them.
func stallMeter(t testing.TB) *testkit.StallMeter {
	m := testkit.StartStallMeter()
	t.Cleanup(m.Stop)
	return m
}

// patient bounds a store operation in tests whose property does not depend on the bound: no
// round trip reaches it on a machine starved by CPU hogs, so such a test fails for what it checks,
// not for the machine's load.
const patient = time.Minute

// busyWait is the AcquireTimeout, and the RetryBackoff, of tests whose waits must end ErrBusy:
// long beside a round trip on a starved machine, so that the first attempt is answered within
// it, and a backoff as long, so that the wait runs out in its pause after that busy answer and
// never during a round trip, whose silence the library rightly reports as Redis's.
const busyWait = 2 * time.Second

var keySeq atomic.Int64

// waitCancelled fails the test unless the lease's context ends within 30s (a give-up time,
// not a bound the library promises).
func waitCancelled(t testing.TB, l *Lease) {
	t.Helper()
	select {
	case <-l.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("holder context not cancelled within 30s")
	}
}

// uniqueKey names a lock key no other test (or repeated run, with -count) uses.
func uniqueKey(t testing.TB) string {
	return fmt.Sprintf("test:%s:%d", t.Name(), keySeq.Add(1))
}

// faultHook injects faults into the commands match selects, on a real connection: the n-th
// matching command (from 0) gets plan(n)'s delay and, when plan returns an error, fails with it
// instead of reaching Redis.
type faultHook struct {
	redishook.PassThrough
	match func(args []any) bool
	plan  func(n int) (time.Duration, error)
	calls atomic.Int64

	mu        sync.Mutex
	deadlines []time.Time // the context deadline each matching command was sent under
	sent      []time.Time // when each matching command reached the hook
}

// ProcessPipelineHook gives each matching command of a pipeline (the default sender under load) its own plan:
// a failed command is taken out of the pipeline with its error, the others go on to Redis after
// the longest delay planned for the pipeline's commands.
func (h *faultHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var delay time.Duration
		pass := make([]redis.Cmder, 0, len(cmds))
		for _, cmd := range cmds {
			if !h.match(cmd.Args()) {
				pass = append(pass, cmd)
				continue
			}
			d, err := h.next(ctx)
			delay = max(delay, d)
			if err != nil {
				cmd.SetErr(err)
				continue
			}
			pass = append(pass, cmd)
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				for _, cmd := range pass {
					cmd.SetErr(ctx.Err())
				}
				return ctx.Err()
			}
		}
		if len(pass) == 0 {
			return nil
		}
		return next(ctx, pass)
	}
}

func (h *faultHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.match(cmd.Args()) {
			return next(ctx, cmd)
		}
		delay, err := h.next(ctx)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				cmd.SetErr(ctx.Err())
				return ctx.Err()
			}
		}
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// next counts one matching command, records its deadline and returns its plan.
func (h *faultHook) next(ctx context.Context) (time.Duration, error) {
	d, _ := ctx.Deadline()
	h.mu.Lock()
	h.deadlines = append(h.deadlines, d)
	h.sent = append(h.sent, time.Now())
	h.mu.Unlock()
	n := int(h.calls.Add(1) - 1)
	if h.plan == nil {
		return 0, nil
	}
	return h.plan(n)
}

// isScript matches an EVALSHA of src, the first try of every redis.Script run.
func isScript(src string) func(args []any) bool {
	sha := redis.NewScript(src).Hash()
	return func(args []any) bool {
		return len(args) > 1 && args[0] == "evalsha" && args[1] == sha
	}
}

// isSetNX matches the plain acquire (SET … NX).
func isSetNX(args []any) bool {
	return len(args) > 0 && args[0] == "set" && args[len(args)-1] == "nx"
}

var errInjected = errors.New("injected network error")

// sendTimes returns when each matching command so far reached the hook.
func (h *faultHook) sendTimes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sent)
}

// seenDeadlines returns the context deadline of every matching command so far (zero: none).
func (h *faultHook) seenDeadlines() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.deadlines)
}

// pipelineGate holds every pipeline sent while holding is set until release is called,
// whatever the pipeline's context says: a batch that cannot finish.
type pipelineGate struct {
	redishook.PassThrough
	holding atomic.Bool
	open    chan struct{}
	once    sync.Once
}

func (g *pipelineGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if g.holding.Load() {
			<-g.open
		}
		return next(ctx, cmds)
	}
}

// replyDelayHook holds back the replies of the commands match selects: each reaches Redis at
// once, and its caller sees the reply delay later, as over a slow return path. It records when
// each matching command was handed on towards Redis.
type replyDelayHook struct {
	redishook.PassThrough
	match func(args []any) bool
	delay time.Duration

	mu   sync.Mutex
	sent []time.Time
}

func (h *replyDelayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.match(cmd.Args()) {
			return next(ctx, cmd)
		}
		h.record()
		err := next(ctx, cmd)
		h.hold(ctx)
		return err
	}
}

func (h *replyDelayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return h.match(c.Args()) }) {
			return next(ctx, cmds)
		}
		h.record()
		err := next(ctx, cmds)
		h.hold(ctx)
		return err
	}
}

func (h *replyDelayHook) record() {
	h.mu.Lock()
	h.sent = append(h.sent, time.Now())
	h.mu.Unlock()
}

func (h *replyDelayHook) hold(ctx context.Context) {
	select {
	case <-time.After(h.delay):
	case <-ctx.Done():
	}
}

// lastSent is when the last matching command was handed on towards Redis.
func (h *replyDelayHook) lastSent(t testing.TB) time.Time {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sent) == 0 {
		t.Fatal("no matching command was sent")
	}
	return h.sent[len(h.sent)-1]
}

// besideLock is a data key in lockKey's cluster slot, which FencedSet may write for it.
func besideLock(lockKey string) string {
	if lockkeys.SlotTag(lockKey) != lockKey {
		return lockKey + ":data" // lockKey has a hash tag: keep it
	}
	return "{" + lockKey + "}:data"
}
