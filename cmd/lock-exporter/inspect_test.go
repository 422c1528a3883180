package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/lockwatch/lockwatch/internal/testkit"
	"github.com/lockwatch/lockwatch/lease"
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
		if err := c.Set(ctx, lease.FenceKey(key), fence, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	config := testkit.WriteFile(t, "exporter.yml", "namespaces:\n  - {name: jobs, pattern: 'jobs:*'}\n  - {name: other, pattern: 'other:*'}\n")

	tests := []struct {
		name       string
		args       []string
		wantRows   []string // KEY TTL IDLE FENCE, as regexps on the whitespace-separated row
		wantHeader string
		wantNote   string
	}{
		{
			name:       "by argument, all keys",
			args:       []string{"--config.file", config, "jobs"},
			wantHeader: `^namespace "jobs" \(pattern "jobs:\*"\): 4 live keys, 1 without TTL, shortest TTL (4\.\d+|5)s; scanned in \S+$`,
			wantRows: []string{
				`^jobs:old 59\.\d+s 2h0m[01]s 1184$`,
				`^jobs:stuck none 10m[01]s -$`,
				`^jobs:bin\\xff 59\.\d+s 1m[01]s -$`,
				`^jobs:fresh (4\.\d+|5)s [34]s 1185$`,
			},
		},
		{
			name:       "by --namespace NAME, limited",
			args:       []string{"--config.file", config, "--namespace", "jobs", "--limit", "2"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:old `, `^jobs:stuck `},
			wantNote:   "note: showing the 2 stalest of 4 keys (--limit)",
		},
		{
			name:       "limit at its bound",
			args:       []string{"--config.file", config, "jobs", "--limit", "100"},
			wantHeader: `namespace "jobs" .*: 4 live keys`,
			wantRows:   []string{`^jobs:old `, `^jobs:stuck `, `^jobs:bin\\xff `, `^jobs:fresh `},
		},
		{
			name:       "ad hoc namespace",
			args:       []string{"--namespace", "adhoc=jobs:f*"},
			wantHeader: `namespace "adhoc" \(pattern "jobs:f\*"\): 1 live keys, 0 without TTL`,
			wantRows:   []string{`^jobs:fresh (4\.\d+|5)s [34]s 1185$`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}, append([]string{"inspect"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit status %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if !regexp.MustCompile(tt.wantHeader).MatchString(lines[0]) {
				t.Errorf("header %q, want %q", lines[0], tt.wantHeader)
			}
			if len(lines) != 2+len(tt.wantRows) || strings.Join(strings.Fields(lines[1]), " ") != "KEY TTL IDLE FENCE" {
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

func regexpMatch(pattern, s string) bool {
	return regexp.MustCompile(pattern).MatchString(s)
}
