package main

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestInspect(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedLocks(t, c, map[string]seed{
		"jobs:old":      {ttl: time.Minute, idle: 7200},
		"jobs:stuck":    {idle: 600},
		"jobs:fresh":    {ttl: 5 * time.Second, idle: 3},
		"jobs:bin\xff":  {ttl: time.Minute, idle: 60},
		"other:ignored": {ttl: time.Minute, idle: 9999},
	})
	ctx := context.Background()
	for key, fence := range map[string]string{"jobs:old": "1184", "jobs:fresh": "1185"} {
		if err := c.Set(ctx, lockkeys.Fence(key), fence, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	config := testkit.WriteFile(t, "exporter.yml", "namespaces:\n  - {name: jobs, pattern: 'jobs:*'}\n  - {name: other, pattern: 'other:*'}\n")

	tests := []struct {
		name       string
		env        map[string]string // beside LOCK_EXPORTER_REDIS_ADDR
		args       []string
		wantRows   []string // KEY TTL IDLE FENCE, as regexps on the whitespace-separated row
		wantHeader string
		wantNote   string
	}{
		{
			name:       "by argument, all keys",
			args:       []string{"--config.file", config, "jobs"},
			wantHeader: `^namespace "jobs" \(pattern "jobs:\*"\): 4 live keys, 1 without TTL, shortest TTL ([0-4]\.\d+|5)s; scanned in \S+$`,
			wantRows: []string{
				`^jobs:stuck none 10m[0-5]s - -$`, // without TTL: listed first; no holder key: "-"
				`^jobs:old 5\d\.\d+s 2h0m[0-5]s 1184 -$`,
				`^jobs:bin\\xff 5\d\.\d+s 1m[0-5]s - -$`,
				`^jobs:fresh ([0-4]\.\d+|5)s [3-8]s 1185 -$`,
			},
		},
		{
			name:       "by --namespace NAME, limited",
			args:       []string{"--config.file", config, "--namespace", "jobs", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:stuck `, `^jobs:old `},
			wantNote:   "note: showing 2 of 4 keys (--limit)",
		},
		{
			name:       "limit 1 still shows the key without TTL",
			args:       []string{"--config.file", config, "jobs", "--limit", "1"},
			wantHeader: `namespace "jobs" .*: 4 live keys, 1 without TTL`,
			wantRows:   []string{`^jobs:stuck none `},
		},
		{
			// Shortest remaining TTL first: a key without expiry never expires, so it comes last.
			name:       "by TTL",
			args:       []string{"--config.file", config, "jobs", "--sort", "ttl"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:fresh `, `^jobs:(old|bin\\xff) `, `^jobs:(old|bin\\xff) `, `^jobs:stuck none `},
		},
		{
			name:       "by TTL, keys without TTL first on request",
			args:       []string{"--config.file", config, "jobs", "--sort", "ttl", "--without-ttl-first"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:stuck none `, `^jobs:fresh `, `^jobs:(old|bin\\xff) `, `^jobs:(old|bin\\xff) `},
		},
		{
			name:       "by TTL, keys without TTL first from the environment",
			env:        map[string]string{"LOCK_EXPORTER_WITHOUT_TTL_FIRST": "true"},
			args:       []string{"--config.file", config, "jobs", "--sort", "ttl", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:stuck none `, `^jobs:fresh `},
			wantNote:   "note: showing 2 of 4 keys (--limit)",
		},
		{
			// The soonest-expiring keys, not the stalest reordered: jobs:fresh is the least
			// stale key, and the first to expire; the key without TTL is past the limit.
			name:       "by TTL, limited",
			args:       []string{"--config.file", config, "jobs", "--sort", "ttl", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys, 1 without TTL`,
			wantRows:   []string{`^jobs:fresh (4\.\d+|5)s `, `^jobs:(old|bin\\xff) `},
			wantNote:   "note: showing 2 of 4 keys (--limit)",
		},
		{
			name:       "by TTL, keys without TTL kept last explicitly",
			args:       []string{"--config.file", config, "jobs", "--sort", "ttl", "--without-ttl-first=false", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:fresh (4\.\d+|5)s `, `^jobs:(old|bin\\xff) `},
			wantNote:   "note: showing 2 of 4 keys (--limit)",
		},
		{
			name:       "by idle time only",
			args:       []string{"--config.file", config, "jobs", "--without-ttl-first=false", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:old `, `^jobs:stuck `},
		},
		{
			name:       "limit at its bound",
			args:       []string{"--config.file", config, "jobs", "--limit", "100"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:stuck `, `^jobs:old `, `^jobs:bin\\xff `, `^jobs:fresh `},
		},
		{
			name:       "ad hoc namespace",
			args:       []string{"--namespace", "adhoc=jobs:f*"},
			wantHeader: `namespace "adhoc" \(pattern "jobs:f\*"\): 1 live key, 0 without TTL`,
			wantRows:   []string{`^jobs:fresh ([0-4]\.\d+|5)s [3-8]s 1185 -$`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}
			maps.Copy(vars, tt.env)
			code, stdout, stderr := runCmd(t, vars, append([]string{"inspect"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit status %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if !regexp.MustCompile(tt.wantHeader).MatchString(lines[0]) {
				t.Errorf("header %q, want %q", lines[0], tt.wantHeader)
			}
			if len(lines) != 2+len(tt.wantRows) || strings.Join(strings.Fields(lines[1]), " ") != "KEY TTL IDLE FENCE HOLDER" {
				t.Fatalf("output:\n%s\nwant the header, the column line and %d rows", stdout, len(tt.wantRows))
			}
			for i, want := range tt.wantRows {
				if row := strings.Join(strings.Fields(lines[2+i]), " "); !regexp.MustCompile(want).MatchString(row) {
					t.Errorf("row %d %q, want %s", i, row, want)
				}
			}
			if !strings.Contains(stderr, tt.wantNote) {
				t.Errorf("stderr %q, want %q", stderr, tt.wantNote)
			}
			if strings.Contains(stdout+stderr, ownerToken) {
				t.Errorf("inspect printed a lock's owner token")
			}
		})
	}

	// GET was never run on a lock key: its idle time is intact.
	if idle, err := c.ObjectIdleTime(ctx, "jobs:old").Result(); err != nil || idle < 7200*time.Second {
		t.Errorf("idle time of jobs:old after inspect: %v (%v)", idle, err)
	}
}

func TestInspectRedisUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	addr := srv.Addr
	srv.Kill()
	code, stdout, stderr := runCmd(t, nil, "inspect", "--redis.addr", addr, "--namespace", "jobs=jobs:*")
	if code != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "lock-exporter inspect: cannot read Redis ("+addr+")") {
		t.Errorf("status %d, stdout %q, stderr %q; want 1 and one line naming the address", code, stdout, stderr)
	}
}

// TestInspectJSONAndLongKeys checks --output json (whole key names, nulls for no TTL) and that a
// megabyte key name is cut in the table as the key label is, instead of padding every row.
func TestInspectJSONAndLongKeys(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	long := "jobs:" + strings.Repeat("k", 1<<20)
	seedLocks(t, c, map[string]seed{long: {ttl: time.Minute, idle: 100}, "jobs:short": {idle: 50}})
	vars := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}

	code, stdout, stderr := runCmd(t, vars, "inspect", "--namespace", "jobs=jobs:*")
	if code != exitOK || len(stdout) > 2000 {
		t.Fatalf("table: status %d, %d bytes of stdout, stderr %q; want 0 and rows cut to the label length", code, len(stdout), stderr)
	}
	if !strings.Contains(stdout, collectors.KeyLabel(long)) {
		t.Errorf("table does not show the long key as its label:\n%s", stdout)
	}

	code, stdout, stderr = runCmd(t, vars, "inspect", "--namespace", "jobs=jobs:*", "--output", "json")
	if code != exitOK {
		t.Fatalf("json: status %d, stderr %q", code, stderr)
	}
	var rep struct {
		Keys           int64 `json:"keys"`
		KeysWithoutTTL int64 `json:"keys_without_ttl"`
		Partial        bool  `json:"partial"`
		Listed         []struct {
			Key        string   `json:"key"`
			TTLSeconds *float64 `json:"ttl_seconds"`
		} `json:"keys_listed"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("json output does not parse: %v", err)
	}
	checkJSONContract(t, stdout)
	if rep.Keys != 2 || rep.KeysWithoutTTL != 1 || rep.Partial || len(rep.Listed) != 2 ||
		rep.Listed[0].Key != "jobs:short" || rep.Listed[0].TTLSeconds != nil || rep.Listed[1].Key != long || rep.Listed[1].TTLSeconds == nil {
		t.Errorf("json report: keys=%d withoutTTL=%d partial=%v listed=%d, want the key without TTL first and the long key whole", rep.Keys, rep.KeysWithoutTTL, rep.Partial, len(rep.Listed))
	}
}

// TestInspectPartialExitStatus checks that a truncated or cut scan says so on stdout and exits
// with exitPartial, not 0 (and not 1, which means Redis could not be read).
func TestInspectPartialExitStatus(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for from := 0; from < 100_000; from += 10_000 {
		pipe := c.Pipeline()
		for i := from; i < from+10_000; i++ {
			pipe.Set(ctx, "jobs:"+strconv.Itoa(i), "t", time.Hour)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}
	tests := []struct {
		name, flag, want string
	}{
		{"key cap", "--scan.max-keys=10", "TRUNCATED at --scan.max-keys 10"},
		// 100k keys take far longer than 50ms to scan, and the first SCAN answers well within it.
		{"deadline", "--scan.timeout=50ms", "PARTIAL: the scan was cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, vars, "inspect", "--namespace", "jobs=jobs:*", tt.flag)
			if code != exitPartial || !strings.Contains(strings.SplitN(stdout, "\n", 2)[0], tt.want) {
				t.Errorf("status %d, stdout %q..., stderr %q; want %d and %q on the summary line", code, firstLine(stdout), stderr, exitPartial, tt.want)
			}
		})
	}
}

// TestInspectCutBeforeFirstReply checks that a deadline that passes before Redis' first reply,
// on a Redis that is up, is a partial answer (exitPartial, PARTIAL on stdout), not "cannot read
// Redis" (exit 1). CLIENT PAUSE holds every command for half a second, far past the 50ms
// deadline, and ends well within the second (answerGrace) inspect then waits for a PING; a run
// that started after the pause ended is retried.
func TestInspectCutBeforeFirstReply(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	seedLocks(t, admin, map[string]seed{"jobs:1": {ttl: time.Minute}})
	ctx := context.Background()
	for attempt := 0; attempt < 3; attempt++ {
		if err := admin.Do(ctx, "CLIENT", "PAUSE", 500, "ALL").Err(); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCmd(t, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}, "inspect", "--namespace", "jobs=jobs:*", "--scan.timeout", "50ms")
		if code == exitOK && strings.Contains(stdout, "1 live key,") {
			continue // the whole run came after the pause: nothing was tested
		}
		if code != exitPartial || !strings.Contains(firstLine(stdout), "0 live keys") || !strings.Contains(firstLine(stdout), "PARTIAL: the scan was cut short") {
			t.Errorf("status %d, stdout %q, stderr %q; want %d and a PARTIAL summary", code, stdout, stderr, exitPartial)
		}
		return
	}
	t.Fatal("every run started after its CLIENT PAUSE had ended")
}

// TestInspectReportSecondsAreExact checks the JSON numbers: 1868ms is 1.868, not the
// 1.8679999999999999 of time.Duration.Seconds.
func TestInspectReportSecondsAreExact(t *testing.T) {
	nr := collectors.NamespaceResult{
		Namespace: collectors.Namespace{Name: "jobs", Pattern: "jobs:*"},
		Keys:      1, HasTTL: true, MinTTL: 1868 * time.Millisecond, Complete: true, Duration: 1118 * time.Millisecond,
	}
	rows := []collectors.KeyInfo{{Key: "jobs:1", TTL: 1868 * time.Millisecond, Idle: 3 * time.Second}}
	rep := newInspectReport(nr, true, rows, companions{fences: []string{"-"}, fenceNums: []*int64{nil}, holders: []*string{nil}, holderLost: []bool{false}}, 100)
	var out strings.Builder
	if err := rep.writeJSON(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"min_ttl_seconds": 1.868,`, `"scan_seconds": 1.118,`, `"ttl_seconds": 1.868,`, `"holder": null`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("JSON report lacks %s:\n%s", want, out.String())
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}

// TestInspectTarget reads a configured target's Redis with --target, beside a redis section that
// points elsewhere (as LOCK_EXPORTER_REDIS_ADDR would in the exporter's pod): each run lists the
// keys of the Redis it names and no other, and no run prints a target's password.
func TestInspectTarget(t *testing.T) {
	section := redistest.Start(t)
	seedLocks(t, section.Client(t), map[string]seed{"jobs:section": {ttl: time.Minute, idle: 5}})
	payments, paymentsClient := testkit.StartPasswordRedis(t, livePassword)
	seedLocks(t, paymentsClient, map[string]seed{
		"jobs:pay-1": {ttl: time.Minute, idle: 30},
		"jobs:pay-2": {idle: 60},
	})
	down, _ := testkit.StartPasswordRedis(t, downPassword)
	downAddr := down.Addr
	down.Kill()
	config := testkit.MultiTargetConfig(t, "", [3]string{"payments", payments.Addr, livePassword}, [3]string{"down", downAddr, downPassword})
	noTargets := testkit.WriteFile(t, "plain.yml", "namespaces:\n  - {name: jobs, pattern: 'jobs:*'}\n")
	env := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": section.Addr}

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantHeader string   // the first line of stdout, as a regexp
		wantRows   []string // the keys listed, in order
		wantErr    string   // the one line on stderr
	}{
		{
			name:       "the redis section without --target",
			args:       []string{"--config.file", config, "jobs"},
			wantCode:   exitOK,
			wantHeader: `^namespace "jobs" .*: 1 live key, 0 without TTL`,
			wantRows:   []string{"jobs:section"},
		},
		{
			name:       "a configured target",
			args:       []string{"--config.file", config, "--target", "payments", "jobs"},
			wantCode:   exitOK,
			wantHeader: `^namespace "jobs" .*: 2 live keys, 1 without TTL`,
			wantRows:   []string{"jobs:pay-2", "jobs:pay-1"},
		},
		{
			name:     "a target that is down",
			args:     []string{"--config.file", config, "--target", "down", "jobs"},
			wantCode: exitFailure,
			wantErr:  `lock-exporter inspect: cannot read Redis (target "down", ` + downAddr + `)`,
		},
		{
			name:     "an unknown target",
			args:     []string{"--config.file", config, "--target", "orders", "jobs"},
			wantCode: exitUsage,
			wantErr:  `--target "orders": unknown target (configured: payments, down)`,
		},
		{
			name:     "no targets configured",
			args:     []string{"--config.file", noTargets, "--target", "payments"},
			wantCode: exitUsage,
			wantErr:  `--target "payments": no targets configured (targets: in --config.file)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, env, append([]string{"inspect"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit status %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if strings.Contains(stdout+stderr, livePassword) || strings.Contains(stdout+stderr, downPassword) {
				t.Errorf("inspect printed a target's password: %q %q", stdout, stderr)
			}
			if tt.wantErr != "" {
				if stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.wantErr) {
					t.Errorf("stdout %q, stderr %q; want nothing and one line containing %q", stdout, stderr, tt.wantErr)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if !regexp.MustCompile(tt.wantHeader).MatchString(lines[0]) {
				t.Errorf("header %q, want %q", lines[0], tt.wantHeader)
			}
			var keys []string
			for _, row := range lines[2:] {
				keys = append(keys, strings.Fields(row)[0])
			}
			if strings.Join(keys, " ") != strings.Join(tt.wantRows, " ") {
				t.Errorf("listed %q, want %q", keys, tt.wantRows)
			}
		})
	}
}

// TestInspectPausedRedis checks that inspect against a Redis that accepts connections but never
// answers (SIGSTOP) gives up within --scan.timeout plus a small grace, exits 1, and says in one
// line which Redis did not answer within what, in inspect's words (no "scrape deadline").
func TestInspectPausedRedis(t *testing.T) {
	srv, _ := testkit.StartPasswordRedis(t, livePassword)
	srv.Pause()
	t.Cleanup(srv.Resume)
	const timeout = time.Second
	start := time.Now()
	code, stdout, stderr := runCmd(t, map[string]string{"LOCK_EXPORTER_REDIS_PASSWORD": livePassword},
		"inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*", "--scan.timeout", timeout.String())
	elapsed := time.Since(start)
	t.Logf("inspect of a paused Redis took %v: status %d, stderr %q", elapsed, code, stderr)
	want := "lock-exporter inspect: Redis at " + srv.Addr + " did not answer within --scan.timeout 1s"
	if code != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("status %d, stdout %q, stderr %q; want %d and one line containing %q", code, stdout, stderr, exitFailure, want)
	}
	if strings.Contains(stderr, "scrape") || strings.Contains(stderr, livePassword) {
		t.Errorf("stderr %q speaks of scrapes or prints the password", stderr)
	}
	// The grace covers a busy machine; the old behaviour (scan, then a 2s PING) took 3s or more.
	if limit := timeout + 1500*time.Millisecond; elapsed > limit {
		t.Errorf("inspect took %v, want at most %v (--scan.timeout %v)", elapsed, limit, timeout)
	}
}
