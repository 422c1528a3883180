package collectors

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newTestScanner(t *testing.T, c redis.UniversalClient, opts Options) *Scanner {
	t.Helper()
	s, err := NewScanner(c, opts)
	if err != nil {
		t.Fatalf("NewScanner: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func scanWithin(t *testing.T, s *Scanner, d time.Duration) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Scan(ctx)
}

// TestScanSeededKeys seeds one server with lock keys of known TTL and idle time, plus keys the
// scan must ignore, and checks every aggregate.
func TestScanSeededKeys(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	seed := newSeeder(t, c)

	// jobs: 6 keys, idle 900..400s, one without TTL, the shortest TTL 5s.
	seed.key(t, "jobs:a", 60*time.Second, 900)
	seed.key(t, "jobs:b", 60*time.Second, 800)
	seed.key(t, "jobs:c", 0, 700)
	seed.key(t, "jobs:d", 5*time.Second, 600)
	seed.key(t, "jobs:e", 60*time.Second, 500)
	seed.key(t, "jobs:f", 60*time.Second, 400)
	// Hash-tagged namespace with a fence counter next to its lock (the lease convention for a
	// key that has its own hash tag): the counter never expires and is not a lock.
	seed.key(t, "{wf}:run:1", 30*time.Second, 10)
	if err := c.Set(context.Background(), "{wf}:run:1:fence", 42, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Not locks: other prefixes, and a key that only shares a substring.
	seed.key(t, "cache:jobs:x", 0, 5000)
	seed.key(t, "other", 0, 5000)
	seed.key(t, "xjobs:a", 0, 5000)

	s := newTestScanner(t, c, Options{
		Namespaces: []Namespace{
			{Name: "jobs", Pattern: "jobs:*", ExpectedTTL: time.Minute, ExpectedRenewInterval: 20 * time.Second},
			{Name: "workflow", Pattern: "{wf}:run:*"},
			{Name: "empty", Pattern: "nothing:*"},
		},
		TopK:      3,
		BatchSize: 2, // several SCAN rounds and pipelines even for a handful of keys
	})
	res := scanWithin(t, s, 5*time.Second)
	if !res.Up || res.Err != nil || !res.IdleTimeAvailable {
		t.Fatalf("Up=%v Err=%v IdleTimeAvailable=%v, want up without error", res.Up, res.Err, res.IdleTimeAvailable)
	}

	jobs, wf, empty := res.Namespaces[0], res.Namespaces[1], res.Namespaces[2]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"jobs keys", jobs.Keys, int64(6)},
		{"jobs without TTL", jobs.KeysWithoutTTL, int64(1)},
		{"jobs has TTL", jobs.HasTTL, true},
		{"jobs min TTL within (4s,5s]", jobs.MinTTL > 4*time.Second && jobs.MinTTL <= 5*time.Second, true},
		{"jobs max idle ~900s", jobs.MaxIdle >= 900*time.Second && jobs.MaxIdle <= 902*time.Second, true},
		{"jobs stalest", keysOf(jobs.Stalest), "jobs:a jobs:b jobs:c"},
		{"jobs stalest TTLs", jobs.Stalest[2].TTL, NoTTL},
		{"jobs complete", jobs.Complete, true},
		{"jobs truncated", jobs.Truncated, false},
		{"workflow keys (fence counter skipped)", wf.Keys, int64(1)},
		{"workflow without TTL", wf.KeysWithoutTTL, int64(0)},
		{"workflow stalest", keysOf(wf.Stalest), "{wf}:run:1"},
		{"empty keys", empty.Keys, int64(0)},
		{"empty has TTL", empty.HasTTL, false},
		{"empty has idle", empty.HasIdle, false},
		{"empty complete", empty.Complete, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}

	got := gather(t, s.Collector(context.Background()))
	metrics := []struct {
		name, ns string
		want     float64
	}{
		{"lock_exporter_up", "", 1},
		{"lock_exporter_idle_time_available", "", 1},
		{"lock_keys", "jobs", 6},
		{"lock_keys_without_ttl", "jobs", 1},
		{"lock_keys", "workflow", 1},
		{"lock_keys", "empty", 0},
		{"lock_keys_without_ttl", "empty", 0},
		{"lock_exporter_keys_truncated", "jobs", 0},
		{"lock_exporter_scrape_complete", "jobs", 1},
		{"lock_exporter_scrape_complete", "empty", 1},
		{"lock_expected_ttl_seconds", "jobs", 60},
		{"lock_expected_renew_interval_seconds", "jobs", 20},
	}
	for _, m := range metrics {
		if v := only(t, got, m.name, m.ns); v != m.want {
			t.Errorf("%s{lock_namespace=%q} = %v, want %v", m.name, m.ns, v, m.want)
		}
	}
	if v := only(t, got, "lock_key_ttl_min_seconds", "jobs"); v <= 4 || v > 5 {
		t.Errorf("lock_key_ttl_min_seconds{jobs} = %v, want (4,5]", v)
	}
	if v := only(t, got, "lock_key_idle_max_seconds", "jobs"); v < 900 || v > 902 {
		t.Errorf("lock_key_idle_max_seconds{jobs} = %v, want ~900", v)
	}
	absent(t, got, "lock_key_ttl_min_seconds", "empty")
	absent(t, got, "lock_key_idle_max_seconds", "empty")
	absent(t, got, "lock_expected_ttl_seconds", "workflow")
	var idleKeys []string
	for _, smp := range got["lock_key_idle_seconds"] {
		if smp.labels[nsLabel] == "jobs" {
			idleKeys = append(idleKeys, smp.labels["key"])
		}
	}
	if strings.Join(idleKeys, " ") != "jobs:a jobs:b jobs:c" {
		t.Errorf("lock_key_idle_seconds{jobs} keys = %v, want the 3 stalest", idleKeys)
	}
	if d := only(t, got, "lock_exporter_scrape_duration_seconds", "jobs"); d <= 0 || d > 5 {
		t.Errorf("lock_exporter_scrape_duration_seconds{jobs} = %v, want within the deadline", d)
	}

	// The scan must not have touched the keys: GET (or any touching command) would reset the
	// idle time it measures.
	if idle, err := c.ObjectIdleTime(context.Background(), "jobs:a").Result(); err != nil || idle < 900*time.Second {
		t.Errorf("idle time of jobs:a after the scan = %v (%v), want still ~900s", idle, err)
	}
}

func keysOf(ks []KeyInfo) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Key)
	}
	return strings.Join(names, " ")
}

// TestBinaryKeys checks that keys which are not valid UTF-8 are counted and exported with a
// label Prometheus accepts.
func TestBinaryKeys(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	seed := newSeeder(t, c)
	keys := []string{
		"bin:\xff\xfe\x00lock",
		"bin:caf\xc3\xa9", // valid UTF-8 é
		"bin:\xc3",        // truncated UTF-8 sequence
		"bin:line\nbreak", // control character
		"bin:" + strings.Repeat("x", 300) + "\xff", // long and binary
	}
	for i, k := range keys {
		seed.key(t, k, time.Minute, 100*(i+1))
	}
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "bin", Pattern: "bin:*"}}, TopK: 10})
	res := scanWithin(t, s, 5*time.Second)
	if !res.Up || res.Namespaces[0].Keys != int64(len(keys)) {
		t.Fatalf("Up=%v keys=%d err=%v, want %d keys", res.Up, res.Namespaces[0].Keys, res.Err, len(keys))
	}
	got := gather(t, s.Collector(context.Background()))
	labels := map[string]bool{}
	for _, smp := range got["lock_key_idle_seconds"] {
		k := smp.labels["key"]
		if !utf8.ValidString(k) || len(k) > walk.MaxKeyLabelLen || strings.ContainsAny(k, "\n\x00") {
			t.Errorf("key label %q: want valid, printable UTF-8 of at most %d bytes", k, walk.MaxKeyLabelLen)
		}
		labels[k] = true
	}
	for _, want := range []string{`bin:\xff\xfe\x00lock`, "bin:café", `bin:\xc3`, `bin:line\x0abreak`} {
		if !labels[want] {
			t.Errorf("missing key label %q in %v", want, labels)
		}
	}
	if len(labels) != len(keys) {
		t.Errorf("%d distinct key labels, want %d", len(labels), len(keys))
	}
	if problems, err := testutil.CollectAndLint(s.Collector(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestKeyCap checks that the per-namespace cap stops the scan, flags it and still reports what
// was seen, and that other namespaces are unaffected.
func TestKeyCap(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	pipe := c.Pipeline()
	for i := range 25 {
		pipe.Set(context.Background(), fmt.Sprintf("capped:%d", i), "t", time.Minute)
	}
	for i := range 3 {
		pipe.Set(context.Background(), fmt.Sprintf("small:%d", i), "t", 0)
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := newTestScanner(t, c, Options{
		Namespaces: []Namespace{{Name: "capped", Pattern: "capped:*"}, {Name: "small", Pattern: "small:*"}},
		MaxKeys:    10,
		BatchSize:  4,
	})
	res := scanWithin(t, s, 5*time.Second)
	capped, small := res.Namespaces[0], res.Namespaces[1]
	if !res.Up || capped.Keys != 10 || !capped.Truncated || !capped.Complete || !capped.HasTTL {
		t.Errorf("capped: up=%v keys=%d truncated=%v complete=%v hasTTL=%v, want 10 keys, truncated and complete",
			res.Up, capped.Keys, capped.Truncated, capped.Complete, capped.HasTTL)
	}
	if small.Keys != 3 || small.KeysWithoutTTL != 3 || small.Truncated {
		t.Errorf("small: keys=%d withoutTTL=%d truncated=%v, want 3, 3, false", small.Keys, small.KeysWithoutTTL, small.Truncated)
	}
	got := gather(t, s.Collector(context.Background()))
	if v := only(t, got, "lock_exporter_keys_truncated", "capped"); v != 1 {
		t.Errorf("lock_exporter_keys_truncated{capped} = %v, want 1", v)
	}
	if v := only(t, got, "lock_keys", "capped"); v != 10 {
		t.Errorf("lock_keys{capped} = %v, want 10", v)
	}
}

// TestIdleTimeUnderLFU checks that an LFU maxmemory-policy, where OBJECT IDLETIME is refused,
// leaves the exporter up with counts and TTLs, and says idle time is unavailable.
func TestIdleTimeUnderLFU(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--maxmemory-policy", "allkeys-lfu"))
	c := client(t, srv.Addr)
	for i := range 5 {
		if err := c.Set(context.Background(), fmt.Sprintf("lfu:%d", i), "t", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "lfu", Pattern: "lfu:*"}}, BatchSize: 2})
	res := scanWithin(t, s, 5*time.Second)
	ns := res.Namespaces[0]
	if !res.Up || res.IdleTimeAvailable || ns.Keys != 5 || !ns.HasTTL || ns.HasIdle {
		t.Fatalf("up=%v idleAvailable=%v keys=%d hasTTL=%v hasIdle=%v err=%v, want up, idle unavailable, 5 keys with TTL",
			res.Up, res.IdleTimeAvailable, ns.Keys, ns.HasTTL, ns.HasIdle, res.Err)
	}
	got := gather(t, s.Collector(context.Background()))
	if v := only(t, got, "lock_exporter_idle_time_available", ""); v != 0 {
		t.Errorf("lock_exporter_idle_time_available = %v, want 0", v)
	}
	absent(t, got, "lock_key_idle_max_seconds", "lfu")
	absent(t, got, "lock_key_idle_seconds", "lfu")
	if v := only(t, got, "lock_keys", "lfu"); v != 5 {
		t.Errorf("lock_keys{lfu} = %v, want 5", v)
	}
}

// TestRedisDown checks a killed server (connection refused) and a paused one (SIGSTOP: the
// connection is accepted by the kernel but nothing answers): both report up 0 by the deadline,
// and the scanner recovers once the server is back.
func TestRedisDown(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(*redistest.Server)
		recover  func(*redistest.Server)
		deadline time.Duration
	}{
		{"killed", (*redistest.Server).Kill, (*redistest.Server).Restart, 3 * time.Second},
		{"paused", (*redistest.Server).Pause, (*redistest.Server).Resume, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := client(t, srv.Addr)
			s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
			if res := scanWithin(t, s, 5*time.Second); !res.Up {
				t.Fatalf("before the fault: up=false: %v", res.Err)
			}

			tt.fail(srv)
			res := scanWithin(t, s, tt.deadline)
			if res.Up || res.Err == nil {
				t.Errorf("up=%v err=%v, want down with an error", res.Up, res.Err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			start := time.Now()
			got := gather(t, s.Collector(ctx))
			// The answer comes by the deadline, plus scheduling slack on a loaded machine.
			if elapsed := time.Since(start); elapsed > tt.deadline+300*time.Millisecond {
				t.Errorf("scrape took %v, deadline %v", elapsed, tt.deadline)
			}
			if v := only(t, got, "lock_exporter_up", ""); v != 0 {
				t.Errorf("lock_exporter_up = %v, want 0", v)
			}
			if v := only(t, got, "lock_exporter_scrape_complete", "jobs"); v != 0 {
				t.Errorf("lock_exporter_scrape_complete = %v, want 0", v)
			}
			absent(t, got, "lock_keys", "jobs")

			tt.recover(srv)
			// The paused server's connection may still carry the cut-off reply; a scan or two
			// later the client has a clean one.
			deadline := time.Now().Add(5 * time.Second)
			for {
				if res := scanWithin(t, s, time.Second); res.Up {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("no recovery after the server came back: %v", res.Err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestDeadlineCutsScan slows every pipeline down so that the scan cannot finish: the answer
// comes at the deadline with what was seen, flagged incomplete, and Redis still counts as up.
func TestDeadlineCutsScan(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	pipe := c.Pipeline()
	for i := range 2000 {
		pipe.Set(context.Background(), fmt.Sprintf("slow:%d", i), "t", time.Minute)
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.AddHook(slowPipelines{delay: 50 * time.Millisecond})
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "slow", Pattern: "slow:*"}}, BatchSize: 50})
	start := time.Now()
	res := scanWithin(t, s, 600*time.Millisecond)
	elapsed := time.Since(start)
	ns := res.Namespaces[0]
	if !res.Up || ns.Complete || ns.Keys == 0 || ns.Keys >= 2000 {
		t.Errorf("up=%v complete=%v keys=%d err=%v, want up, incomplete, some keys", res.Up, ns.Complete, ns.Keys, res.Err)
	}
	if elapsed > 900*time.Millisecond {
		t.Errorf("scan took %v, deadline 600ms", elapsed)
	}
	if ns.Duration < 500*time.Millisecond || ns.Duration > 900*time.Millisecond {
		t.Errorf("duration %v, want about the 600ms deadline", ns.Duration)
	}
}

// TestConcurrentScansShareOne holds the first scan's SCAN until four more scans have been
// requested, and checks that Redis saw one scan, not five.
func TestConcurrentScansShareOne(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	for i := range 10 {
		if err := c.Set(context.Background(), fmt.Sprintf("shared:%d", i), "t", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	counter := redishook.NewCommandCounter()
	gate := &scanGate{entered: make(chan struct{}), release: make(chan struct{})}
	c.AddHook(counter)
	c.AddHook(gate)
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "shared", Pattern: "shared:*"}}})

	const scrapes = 5
	results := make(chan *Result, scrapes)
	var started sync.WaitGroup
	go func() { results <- scanWithin(t, s, 10*time.Second) }()
	<-gate.entered
	for range scrapes - 1 {
		started.Add(1)
		go func() {
			started.Done()
			results <- scanWithin(t, s, 10*time.Second)
		}()
	}
	started.Wait()
	// The held scan cannot finish before release, so a scrape that has called Scan by now has
	// joined it; the pause lets the goroutines get there.
	time.Sleep(200 * time.Millisecond)
	close(gate.release)
	for range scrapes {
		if res := <-results; !res.Up || res.Namespaces[0].Keys != 10 {
			t.Errorf("shared scan result: up=%v keys=%d, want up with 10 keys", res.Up, res.Namespaces[0].Keys)
		}
	}
	if n := counter.Count("scan"); n != 1 {
		t.Errorf("%d SCAN commands for %d concurrent scrapes, want 1", n, scrapes)
	}

	// Sequential scrapes each scan: the sharing above is not an accident of caching.
	for range 2 {
		scanWithin(t, s, 5*time.Second)
	}
	if n := counter.Count("scan"); n != 3 {
		t.Errorf("%d SCAN commands after 2 more sequential scrapes, want 3", n)
	}
}

// scanGate blocks the first SCAN until release is closed.
type scanGate struct {
	redishook.PassThrough
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *scanGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" {
			g.once.Do(func() { close(g.entered) })
			<-g.release
		}
		return next(ctx, cmd)
	}
}

func TestScanAfterClose(t *testing.T) {
	srv := redistest.Start(t)
	s, err := NewScanner(client(t, srv.Addr), Options{Namespaces: []Namespace{{Name: "a", Pattern: "a:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if res := scanWithin(t, s, time.Second); res.Up || res.Err != ErrScannerClosed {
		t.Errorf("after Close: up=%v err=%v, want ErrScannerClosed", res.Up, res.Err)
	}
}
