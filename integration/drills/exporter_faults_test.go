package drills

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/faultproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestExporterFaults runs the real lock-exporter, as its least-privilege ACL user, in front of
// a Redis that fails in every way the lease drills use: link latency beyond the scrape deadline,
// a blackhole, connection resets (through the fault proxy), a frozen server, and a server killed
// and restarted empty. Each scrape must answer within the scrape deadline with
// lock_exporter_up 0 while Redis is unusable, and the exporter must recover by itself once Redis
// is back. `inspect` runs against the same Redis while leases are held; its output, the
// exporter's log and every scrape are searched for the holders' tokens.
func TestExporterFaults(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--aclfile", aclFile(t)))
	a := newAudit(t)
	exporterBinary(t) // build before the leak baseline and the clock start
	defer checkLeaks(t)()
	ctx := context.Background()
	holder := newWorker(t, a, "holder", srv.Addr, false)
	defer holder.close()
	ns := holder.namespace(t, "jobs", lease.Policy{TTL: 30 * time.Second, Fencing: true})
	const held = 3
	var leases []*lease.Lease
	for i := 0; i < held; i++ {
		l, err := ns.Acquire(ctx, uniqueKey(t, "jobs"))
		if err != nil {
			t.Fatal(err)
		}
		a.learn(t, holder.rdb, l.Key())
		leases = append(leases, l)
	}
	pattern := "drill:" + strings.ReplaceAll(t.Name(), "/", "-") + ":jobs:*"

	// inspect, as the ACL user, while the leases are held.
	code, out, errOut := runBinary(t, aclEnv(), "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs="+pattern)
	a.text("inspect stdout", out)
	a.text("inspect stderr", errOut)
	if code != 0 || strings.Count(out, "\ndrill:") != held {
		t.Fatalf("inspect exited %d with %d keys listed, want %d:\n%s%s", code, strings.Count(out, "\ndrill:"), held, out, errOut)
	}

	proxy := faultproxy.Start(t, srv.Addr)
	defer proxy.Close()
	// The exporter answers within the scrape timeout less its 500ms offset; the check allows 1s
	// and four times the worst scheduling stall the drill measured on top (an exporter that
	// waited for Redis would answer only at the 5s scan timeout, or never).
	const scrapeTimeout = 2 * time.Second
	stalls := testkit.StartStallMeter()
	defer stalls.Stop()
	ex := startExporter(t, a, aclEnv(), nil, "--redis.addr", proxy.Addr, "--namespace", "jobs="+pattern,
		"--namespace", "absent=drill:none:*", "--scan.timeout", "5s")
	defer ex.stop()

	healthy := func(what string, wantKeys float64) time.Duration {
		t.Helper()
		start := time.Now()
		var last scrape
		testkit.Eventually(t, 30*time.Second, "the exporter to recover after "+what, func() bool {
			last = ex.scrape(t, a, scrapeTimeout, "", "")
			keys, _ := last.gauge("lock_keys", "lock_namespace", "jobs")
			return last.up(t) == 1 && keys == wantKeys
		})
		if v, _ := last.gauge("lock_exporter_scrape_complete", "lock_namespace", "jobs"); v != 1 {
			t.Errorf("after %s: lock_exporter_scrape_complete = %v, want 1", what, v)
		}
		return time.Since(start)
	}
	down := func(what string) time.Duration {
		t.Helper()
		s := ex.scrape(t, a, scrapeTimeout, "", "")
		if s.status != 200 {
			t.Fatalf("%s: scrape status %d, want 200 with lock_exporter_up 0", what, s.status)
		}
		if s.up(t) != 0 {
			t.Errorf("%s: lock_exporter_up = 1, want 0", what)
		}
		if limit := scrapeTimeout + stalls.Slack(time.Second); s.took > limit {
			t.Errorf("%s: scrape took %s, want within the %s scrape timeout (limit %s for the stalls seen)", what, s.took, scrapeTimeout, limit)
		}
		if _, ok := s.gauge("lock_keys", "lock_namespace", "jobs"); ok {
			t.Errorf("%s: lock_keys exported while Redis is unreadable (unknown is not zero)", what)
		}
		return s.took
	}
	healthy("start", held)

	faults := []struct {
		name         string
		inject, heal func()
		wantKeys     float64
	}{
		{"latency beyond the deadline", func() { proxy.SetLatency(3 * time.Second) }, proxy.Heal, held},
		{"blackhole", proxy.Blackhole, proxy.Heal, held},
		{"connection resets", proxy.Reset, proxy.Heal, held},
		{"frozen Redis (SIGSTOP)", srv.Pause, srv.Resume, held},
		// The restarted server is empty; the ACL file brings the exporter's user back.
		{"Redis killed and restarted empty", srv.Kill, srv.Restart, 0},
	}
	for _, f := range faults {
		f.inject()
		took := down(f.name)
		f.heal()
		t.Logf("%s: lock_exporter_up 0, scrape answered in %s (deadline %s); up 1 again %s after healing",
			f.name, took.Round(time.Millisecond), scrapeTimeout-500*time.Millisecond, healthy(f.name, f.wantKeys).Round(time.Millisecond))
	}

	// The holders' locks went with the restart: no release deletes anything.
	for _, l := range leases {
		err := l.Release(ctx)
		a.err("release error", err)
		if !errors.Is(err, lease.ErrNotOwned) && !errors.Is(err, lease.ErrAbandoned) {
			t.Errorf("release after the restart = %v, want ErrNotOwned or ErrAbandoned", err)
		}
	}
	wantMetrics(t, "holder", holder.reg, "jobs", map[string]bound{"lock_held": eq(0)})
	if logs := ex.stderr.String(); !strings.Contains(logs, "lock key scan failed") {
		t.Errorf("the exporter logged no scan failure:\n%s", logs)
	}
	ex.stop()
	holder.close()
}
