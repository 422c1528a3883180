package peertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestStaleReleaseBurstFiresLockNotOwnedRatioHigh drives the pack's own rules with counters
// observed from real redislock traffic: an hour of clean cycles, then a burst of stale
// releases (a holder whose key expired and was taken releases late). Each simulated minute's
// counter values become one sample of a promtool input series; promtool evaluates the
// generated recording and alerting rules over them, unchanged.
func TestStaleReleaseBurstFiresLockNotOwnedRatioHigh(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "jobs:*")
	locker := redislockEnv(t, e, nil)
	const minutes, burstFrom, cyclesPerMinute, staleInBurst = 81, 60, 20, 10

	series := map[string][]string{}
	counters := []struct{ name, outcome string }{
		{"lock_renewals_total", "ok"}, {"lock_renewals_total", "failed"}, {"lock_renewals_total", "not_owned"},
		{"lock_releases_total", "ok"}, {"lock_releases_total", "not_owned"}, {"lock_releases_total", "error"},
	}
	for minute := range minutes {
		for range cyclesPerMinute {
			cycleRedislock(ctx, t, locker, "jobs:clean")
		}
		if minute >= burstFrom {
			for range staleInBurst {
				staleRelease(ctx, t, e, locker)
			}
		}
		for _, c := range counters {
			key := fmt.Sprintf(`%s{job="app",instance="a",lock_namespace="jobs",outcome="%s"}`, c.name, c.outcome)
			series[key] = append(series[key], fmt.Sprint(e.value(t, c.name, c.outcome)))
		}
	}
	if got := e.value(t, "lock_releases_total", "not_owned"); got != (minutes-burstFrom)*staleInBurst {
		t.Fatalf("observed %v stale releases, want %d", got, (minutes-burstFrom)*staleInBurst)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	file := writePromtoolTest(t, root, series)
	cmd := exec.Command(testkit.Tool(t, "promtool"), "test", "rules", file)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

func cycleRedislock(ctx context.Context, t *testing.T, locker *redislock.Client, key string) {
	t.Helper()
	l, err := locker.Obtain(ctx, key, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// staleRelease: A's key is gone (deleted here, as its TTL would), B takes the lock, A releases
// late and is refused, B releases.
func staleRelease(ctx context.Context, t *testing.T, e *env, locker *redislock.Client) {
	t.Helper()
	a, err := locker.Obtain(ctx, "jobs:stale", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.Do(ctx, "del", "jobs:stale"); err != nil {
		t.Fatal(err)
	}
	b, err := locker.Obtain(ctx, "jobs:stale", 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
		t.Fatalf("stale release: %v", err)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// writePromtoolTest writes a promtool unit test over the observed series: nothing at all
// through the clean hour, nothing firing in the burst's first minutes (the for: durations),
// both tiers firing by 80m.
func writePromtoolTest(t *testing.T, root string, series map[string][]string) string {
	t.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "rule_files:\n  - %s\n  - %s\n", filepath.Join(root, "alerts", "lockwatch-recording.yml"), filepath.Join(root, "alerts", "lockwatch-alerts.yml"))
	sb.WriteString(`evaluation_interval: 1m
group_eval_order:
  - lockwatch-recording-5m
  - lockwatch-recording-30m
  - lockwatch-recording-1h
  - lockwatch-recording-6h
  - lockwatch-library
  - lockwatch-exporter
tests:
  - name: stale-release burst observed from redislock
    interval: 1m
    input_series:
`)
	for name, values := range series {
		fmt.Fprintf(&sb, "      - series: '%s'\n        values: '%s'\n", name, strings.Join(values, " "))
	}
	sb.WriteString(`    promql_expr_test:
      - expr: ALERTS{alertname="LockNotOwnedRatioHigh"}
        eval_time: 59m
        exp_samples: []
      - expr: ALERTS{alertname="LockNotOwnedRatioHigh",alertstate="firing"}
        eval_time: 62m
        exp_samples: []
      - expr: ALERTS{alertname="LockNotOwnedRatioHigh",alertstate="firing"}
        eval_time: 80m
        exp_samples:
          - labels: 'ALERTS{alertname="LockNotOwnedRatioHigh",alertstate="firing",job="app",lock_namespace="jobs",severity="critical"}'
            value: 1
          - labels: 'ALERTS{alertname="LockNotOwnedRatioHigh",alertstate="firing",job="app",lock_namespace="jobs",severity="warning"}'
            value: 1
`)
	file := filepath.Join(t.TempDir(), "observed_not_owned_test.yml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
