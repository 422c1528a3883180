package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// indexMemoryKeysEnv sets the lock keys of TestIndexMemory (default 1M).
const indexMemoryKeysEnv = "LOCKWATCH_INDEX_MEMORY_KEYS"

// TestIndexMemory runs the built exporter over 1M lock keys (names like "locks:job:123456",
// one in three with a TTL) in three ways and reads its RSS from /proc once the namespace is
// served: the index under the manifests' GOMEMLIMIT, which must stay under the 128Mi limit
// also across a resync (two indexes live while the new one is built); the index without
// GOMEMLIMIT (logged: what Go's default GOGC alone gives); and the walk, which must stay
// under the limit too. The figures are docs/exporter.md's Cost table.
func TestIndexMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a Redis with 1M keys and builds the binary")
	}
	keys := 1_000_000
	if v := os.Getenv(indexMemoryKeysEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number", indexMemoryKeysEnv, v)
		}
		keys = n
	}
	srv := redistest.Start(t, redistest.WithArgs("--enable-debug-command", "yes"))
	// DEBUG POPULATE of a million keys holds the server for seconds on a busy machine: more
	// than go-redis' default 3 s read timeout.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 2 * time.Minute, WriteTimeout: 2 * time.Minute})
	t.Cleanup(func() { _ = c.Close() })
	populateLocks(t, c, keys)
	bin := testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")
	goMemLimit := manifestGoMemLimit(t)
	runs := []struct {
		name   string
		env    []string
		mode   string
		assert bool
	}{
		{"index/GOMEMLIMIT=" + goMemLimit, []string{"GOMEMLIMIT=" + goMemLimit}, "auto", true},
		{"index/no-GOMEMLIMIT", nil, "auto", false},
		{"walk/GOMEMLIMIT=" + goMemLimit, []string{"GOMEMLIMIT=" + goMemLimit}, "walk", true},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			env := append([]string{"GODEBUG=gctrace=1"}, run.env...)
			s, cmd, logs := runBinaryEnv(t, env, bin, "--redis.addr", srv.Addr,
				"--namespace", "jobs=locks:job:*", "--web.listen-address", "127.0.0.1:0",
				"--scan.mode", run.mode, "--scan.index-key-budget", strconv.Itoa(2*keys),
				"--scan.max-keys", strconv.Itoa(2*keys), "--scan.timeout", "60s")
			mode := fmt.Sprintf("lock_exporter_scan_mode{lock_namespace=\"jobs\",mode=%q", map[string]string{"auto": "index", "walk": "walk"}[run.mode])
			served := func(what string) time.Duration {
				t.Helper()
				var took time.Duration
				testkit.Eventually(t, 3*time.Minute, "the namespace served "+what, func() bool {
					start := time.Now()
					_, body, err := s.fetch("/metrics", 60*time.Second)
					took = time.Since(start)
					return err == nil && sample(body, `lock_keys{lock_namespace="jobs"}`) == float64(keys) && strings.Contains(body, mode) &&
						(run.mode == "walk" || strings.Contains(body, "lock_exporter_index_age_seconds{lock_namespace=\"jobs\"} 0\n"))
				})
				return took
			}
			measure := func(what string, took time.Duration) {
				t.Helper()
				rss, hwm := rssOf(t, cmd.Process.Pid)
				t.Logf("%d keys, %s, %s: RSS %.1f MiB, peak %.1f MiB, live heap at the last GC %s, scrape %s",
					keys, run.name, what, mib(rss), mib(hwm), lastLiveHeap(logs.String()), took.Round(time.Millisecond))
				if run.assert && hwm >= memoryLimit {
					t.Errorf("%s: peak RSS %.1f MiB, at or above the 128Mi limit", what, mib(hwm))
				}
			}
			served("after start")
			measure("served", served("again"))
			if run.mode != "auto" {
				return
			}
			// A resync builds a new index beside the one served: the peak of a running exporter.
			if err := c.Do(context.Background(), "CLIENT", "KILL", "ID", testkit.TrackingClientID(t, c)).Err(); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 3*time.Minute, "a resync", func() bool {
				_, body, err := s.fetch("/metrics", 60*time.Second)
				return err == nil && strings.Contains(body, `lock_exporter_index_resyncs_total{reason="connection_lost"} 1`)
			})
			measure("after a resync", served("after the resync"))
		})
	}
}

// manifestGoMemLimit is the GOMEMLIMIT deploy/kubernetes/lock-exporter.yaml sets beside its
// 128Mi limit (deploytest's TestManifestsSetGoMemLimit keeps the Helm chart's equal to it).
func manifestGoMemLimit(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "deploy", "kubernetes", "lock-exporter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "- name: GOMEMLIMIT\n")
	value, _, _ := strings.Cut(after, "\n")
	limit, ok2 := strings.CutPrefix(strings.TrimSpace(value), "value: ")
	if !ok || !ok2 {
		t.Fatal("deploy/kubernetes/lock-exporter.yaml sets no GOMEMLIMIT")
	}
	return limit
}

// populateLocks creates n keys locks:job:<i> (DEBUG POPULATE) and gives one in three a TTL.
func populateLocks(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	if err := c.Do(ctx, "DEBUG", "POPULATE", n, "locks:job", 16).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	for i := 0; i < n; i += 3 {
		pipe.PExpire(ctx, "locks:job:"+strconv.Itoa(i), time.Hour)
		if pipe.Len() == 10_000 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// sample is the value of the series named (with labels) in a text exposition, or -1.
func sample(body, series string) float64 {
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	return -1
}

// rssOf reads VmRSS and VmHWM (the peak) of a process, in bytes.
func rssOf(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, _ := strings.Cut(line, ":")
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		switch {
		case name != "VmRSS" && name != "VmHWM":
		case err != nil:
			t.Fatalf("/proc status %q: %v", line, err)
		case name == "VmRSS":
			rss = kb << 10
		default:
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// gcLine is a GODEBUG=gctrace=1 line: heap at the start, at the end and live (marked), in MB.
var gcLine = regexp.MustCompile(`gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// lastLiveHeap is the heap the last collection found live, from the exporter's gctrace log.
func lastLiveHeap(log string) string {
	m := gcLine.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		return "(no gc yet)"
	}
	return m[len(m)-1][3] + " MB"
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// indexGrowthKeysEnv runs TestIndexMemoryKeysWrittenAfterStart with that many keys (3M for
// docs/exporter.md's figures); unset, the test is skipped: it writes at ~10k keys/s.
const indexGrowthKeysEnv = "LOCKWATCH_INDEX_GROWTH_KEYS"

// TestIndexMemoryKeysWrittenAfterStart runs the built exporter with the manifests' GOMEMLIMIT and
// the default index key budget over two namespaces that are empty at start, writes keys into
// them at ~10k/s (one-hour TTLs, alternating between the namespaces: locks:a:N, locks:b:N),
// scrapes every 5 s meanwhile, and fails if the peak RSS reaches the manifests' 128Mi limit.
// The change feed adds the keys to the index: the key budget must hold for them as it does for
// the build's walk.
func TestIndexMemoryKeysWrittenAfterStart(t *testing.T) {
	total, _ := strconv.Atoi(os.Getenv(indexGrowthKeysEnv))
	if total <= 0 {
		t.Skipf("set %s (3000000 for the documented run): writes at ~10k keys/s", indexGrowthKeysEnv)
	}
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	bin := testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")
	goMemLimit := manifestGoMemLimit(t)
	s, cmd, logs := runBinaryEnv(t, []string{"GODEBUG=gctrace=1", "GOMEMLIMIT=" + goMemLimit}, bin, "--redis.addr", srv.Addr,
		"--namespace", "a=locks:a:*", "--namespace", "b=locks:b:*", "--web.listen-address", "127.0.0.1:0", "--scan.timeout", "60s")
	testkit.Eventually(t, time.Minute, "the index to serve", func() bool {
		_, body, err := s.fetch("/metrics", 60*time.Second)
		return err == nil && strings.Contains(body, "lock_exporter_index_age_seconds{lock_namespace=\"a\"} 0\n")
	})
	report := func(written int) {
		t.Helper()
		_, body, err := s.fetch("/metrics", 90*time.Second)
		if err != nil {
			t.Errorf("scrape at %d keys written: %v", written, err)
		}
		rss, hwm := rssOf(t, cmd.Process.Pid)
		t.Logf("%d keys written: index holds %.0f keys; a %s, b %s; RSS %.1f MiB, peak %.1f MiB, live heap at the last GC %s",
			written, sample(body, "lock_exporter_index_keys"), modeOf(body, "a"), modeOf(body, "b"), mib(rss), mib(hwm), lastLiveHeap(logs.String()))
	}
	const perTick, tick = 1000, 100 * time.Millisecond // 10k keys/s
	next := time.Now()
	lastReport := time.Now()
	for written := 0; written < total; {
		pipe := c.Pipeline()
		for range perTick {
			ns := []string{"a", "b"}[written%2]
			pipe.Set(ctx, fmt.Sprintf("locks:%s:%d", ns, written), "t", time.Hour)
			written++
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Since(lastReport) >= 5*time.Second {
			report(written)
			lastReport = time.Now()
		}
		next = next.Add(tick)
		time.Sleep(time.Until(next))
	}
	report(total)
	time.Sleep(10 * time.Second) // the feed's last re-reads, and a scrape's walk of both
	report(total)
	_, hwm := rssOf(t, cmd.Process.Pid)
	if hwm >= memoryLimit {
		t.Errorf("peak RSS %.1f MiB with %d keys written after start: at or above the 128Mi limit", mib(hwm), total)
	}
}

// modeOf is how the exposition body says namespace ns is read: "index", or "walk/<reason>".
func modeOf(body, ns string) string {
	for line := range strings.SplitSeq(body, "\n") {
		rest, ok := strings.CutPrefix(line, `lock_exporter_scan_mode{lock_namespace="`+ns+`",mode="`)
		if !ok {
			continue
		}
		mode, rest, _ := strings.Cut(rest, `"`)
		reason, _, _ := strings.Cut(strings.TrimPrefix(rest, `,reason="`), `"`)
		if mode == "walk" {
			return mode + "/" + reason
		}
		return mode
	}
	return "?"
}
