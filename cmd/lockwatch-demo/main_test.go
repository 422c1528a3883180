package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/testharness/clitest"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runCmd runs `lockwatch-demo args...` in-process with the environment variables vars, and
// returns its exit status and output.
func runCmd(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, vars, func(ctx context.Context, e cli.Env) int { return run(ctx, &e, args) })
}

// contractMetrics are the metric names of the brief's contract: the demo must give each a
// series.
var contractMetrics = []string{
	"lock_acquire_wait_seconds_count", "lock_renewals_total", "lock_releases_total",
	"lock_abandoned_total", "lock_held_seconds_count", "lock_held", "lock_fenced_writes_total",
	"lock_keys", "lock_keys_without_ttl", "lock_key_ttl_min_seconds", "lock_key_idle_max_seconds",
	"lock_key_idle_seconds", "lock_exporter_up", "lock_exporter_scrape_duration_seconds",
	"lock_exporter_keys_truncated", "lock_exporter_build_info",
	"lock_expected_ttl_seconds", "lock_expected_renew_interval_seconds", "lock_exporter_scrape_complete",
}

// sums adds up every series of each metric name whose labels contain all of match.
func sums(body string, match ...string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		series, value := line[:i], line[i+1:]
		name := series
		if j := strings.IndexByte(series, '{'); j >= 0 {
			name = series[:j]
		}
		ok := true
		for _, m := range match {
			ok = ok && strings.Contains(series, m)
		}
		v, err := strconv.ParseFloat(value, 64)
		if ok && err == nil {
			out[name] += v
		}
	}
	return out
}

// TestDemoShowsEveryMetricAndTheFaults runs the demo in-process against a real Redis shared with
// another application's key, scrapes its /metrics until every contract metric has a series and
// each injected fault is visible, then stops it as Ctrl-C does and checks that exactly the demo's
// keys are gone.
func TestDemoShowsEveryMetricAndTheFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for up to a minute")
	}
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := srv.Do(ctx, "SET", "app:lock:keep-me", "x"); err != nil {
		t.Fatal(err)
	}

	e, stdout, stderr := clitest.NewEnv(nil)
	listening := make(chan []string, 1)
	e.Listening = func(addrs []string) { listening <- addrs }
	demoCtx, stop := context.WithCancel(ctx)
	defer stop()
	exited := make(chan int, 1)
	go func() {
		exited <- run(demoCtx, &e, []string{"--redis.addr", srv.Addr, "--web.listen-address", "127.0.0.1:0", "--status.interval", "1s"})
	}()
	var url string
	select {
	case addrs := <-listening:
		url = "http://" + addrs[0] + "/metrics"
	case code := <-exited:
		t.Fatalf("demo exited %d before serving: %s", code, stderr.String())
	}

	faults := []struct{ name, metric, match string }{
		{"abandonment", "lock_abandoned_total", ""},
		{"renewal not owned", "lock_renewals_total", `outcome="not_owned"`},
		{"stale release", "lock_releases_total", `outcome="not_owned"`},
		{"renew failure", "lock_renewals_total", `outcome="failed"`},
		{"rejected fenced write", "lock_fenced_writes_total", `outcome="rejected"`},
		{"acquire busy", "lock_acquire_wait_seconds_count", `outcome="busy"`},
		{"key without TTL", "lock_keys_without_ttl", `lock_namespace="reconciler"`},
		{"redis reachable", "lock_exporter_up", ""},
	}
	deadline := time.Now().Add(60 * time.Second)
	var body string
	for {
		body = scrape(t, url)
		var missing []string
		all := sums(body)
		for _, name := range contractMetrics {
			if _, ok := all[name]; !ok {
				missing = append(missing, name)
			}
		}
		for _, f := range faults {
			if sums(body, f.match)[f.metric] <= 0 {
				missing = append(missing, f.name)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s still missing %v\n%s", missing, body)
		}
		time.Sleep(2 * time.Second)
	}
	if n := sums(body, `key="`)["lock_key_idle_seconds"]; n < 0 {
		t.Errorf("lock_key_idle_seconds sums to %v", n)
	}

	stop()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("demo exited %d: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("demo did not stop within 20s of cancellation")
	}
	out := stdout.String()
	for _, want := range []string{"metrics: http://", "scheduler", "snapshot", "abandoned", "demo keys removed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	keys, err := srv.Do(ctx, "KEYS", "*")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := keys.([]any); !ok || len(got) != 1 || got[0] != "app:lock:keep-me" {
		t.Errorf("keys left after the demo: %v, want only app:lock:keep-me", keys)
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestDemoBadInvocations(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"negative duration", []string{"--duration", "-1s"}, `--duration "-1s": must not be negative`},
		{"bad duration", []string{"--duration", "soon"}, `--duration "soon": invalid duration "soon" (want e.g. 10s, 1m30s)`},
		{"zero status interval", []string{"--status.interval", "0s"}, `--status.interval "0s": must be positive`},
		{"stray argument", []string{"now"}, `unexpected argument "now"`},
		{"bad log level", []string{"--log.level", "loud"}, `--log.level "loud": want debug, info, warn or error`},
		{"bad log format", []string{"--log.format", "xml"}, `--log.format "xml": want logfmt or json`},
		{"bad listen address", []string{"--web.listen-address", ":notaport"}, `--web.listen-address ":notaport"`},
		{"bad redis url", []string{"--redis.addr", "redis://:secret@host:1/notadb"}, `--redis.addr "redis://:xxxxx@host:1/notadb"`},
		// The demo has no --redis.password-file: the message names only what it reads. It named the
		// exporter's redis.password-file, which the demo refuses as an unknown flag.
		{"password in redis url", []string{"--redis.addr", "redis://:secret@127.0.0.1:1"}, `--redis.addr "redis://:xxxxx@127.0.0.1:1": has a password: give it in LOCK_EXPORTER_REDIS_PASSWORD`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, nil, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (%s)", code, exitUsage, stderr)
			}
			if strings.Contains(stderr, "secret") {
				t.Errorf("stderr shows the password: %q", stderr)
			}
			if !strings.HasPrefix(stderr, "lockwatch-demo: ") || !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tt.wantErr)
			}
		})
	}
}

// TestDemoListenAddressTaken checks the runtime failure path: a port already taken is exit 1
// with one line naming it, and the demo returns instead of waiting for a server that never
// started.
func TestDemoListenAddressTaken(t *testing.T) {
	srv := redistest.Start(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	code, _, stderr := runCmd(t, nil, "--redis.addr", srv.Addr, "--web.listen-address", taken.Addr().String())
	if code != exitFailure {
		t.Errorf("exit %d, want %d (%s)", code, exitFailure, stderr)
	}
	want := `lockwatch-demo: --web.listen-address "` + taken.Addr().String() + `"`
	if !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line starting %q", stderr, want)
	}
}

// TestDemoRedisUnreachable: a --redis.addr nobody answers on, or a wrong password, is exit 1
// with one line naming the address and Redis's reason, at once: not a banner of next steps
// and a status line of zeros until Ctrl-C, then "demo keys removed". The password never shows.
func TestDemoRedisUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := closed.Addr().String()
	closed.Close()
	secured := redistest.Start(t, redistest.WithArgs("--requirepass", "right-password"))
	tests := []struct {
		name, addr, password, wantErr string
	}{
		{"nothing listening", down, "", "connection refused"},
		{"wrong password", secured.Addr, "wrong-password", "WRONGPASS"},
		{"no password", secured.Addr, "", "NOAUTH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := runCmd(t, map[string]string{"LOCK_EXPORTER_REDIS_PASSWORD": tt.password},
				"--redis.addr", tt.addr, "--web.listen-address", "127.0.0.1:0", "--duration", "20s")
			if code != exitFailure {
				t.Errorf("exit %d, want %d (%s)", code, exitFailure, stderr)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v: the demo ran on without Redis", took)
			}
			want := `lockwatch-demo: --redis.addr "` + tt.addr + `": cannot reach Redis: `
			if !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line starting %q and mentioning %q", stderr, want, tt.wantErr)
			}
			if strings.Contains(stdout, "keys removed") || strings.Contains(stdout, "Next steps") {
				t.Errorf("stdout claims a running demo:\n%s", stdout)
			}
			if tt.password != "" && strings.Contains(stdout+stderr, tt.password) {
				t.Errorf("output shows the password")
			}
		})
	}
}

// TestDemoHelpSaysWhereThePasswordGoes: the demo reads a Redis password from
// LOCK_EXPORTER_REDIS_PASSWORD only, and its --help says so.
func TestDemoHelpSaysWhereThePasswordGoes(t *testing.T) {
	code, stdout, _ := runCmd(t, nil, "--help")
	if code != exitOK || !strings.Contains(stdout, "LOCK_EXPORTER_REDIS_PASSWORD") {
		t.Errorf("exit %d, --help does not name LOCK_EXPORTER_REDIS_PASSWORD:\n%s", code, stdout)
	}
}
