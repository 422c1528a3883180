package exporter

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Passwords of the two targets: no response and no log line may ever contain them.
const (
	livePassword = "live-pw-3d9e71"
	downPassword = "down-pw-8c02aa"
)

// scrapeURL is the path of target's scrape.
func scrapeURL(target string) string {
	return ScrapePath + "?" + url.Values{targetParam: {target}}.Encode()
}

// TestScrapeWaitsForAScanSlot fills the global cap, then scrapes: the scrape waits until its
// deadline and gets a 503 naming the setting, and succeeds once a slot is free.
func TestScrapeWaitsForAScanSlot(t *testing.T) {
	live, liveClient := testkit.StartPasswordRedis(t, livePassword)
	if err := liveClient.Set(context.Background(), "jobs:1", "token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	cfg, err := exporterconfig.Load(testkit.MultiTargetConfig(t, "", [3]string{"live", live.Addr, livePassword}))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := newTargetSet(cfg, newScanners(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	reg := prometheus.NewRegistry()
	metrics := newTargetMetrics(reg)
	metrics.track(ts.order)
	h := &targetHandler{targets: ts, limiter: newScanLimiter(1), metrics: metrics, ceiling: 10 * time.Second,
		offset: 100 * time.Millisecond, logger: slog.New(slog.DiscardHandler)}
	scrape := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, scrapeURL("live"), nil)
		req.Header.Set(ScrapeTimeoutHeader, "0.5")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	_ = h.limiter.take(context.Background()) // another target's scan holds the only slot
	rec := scrape()
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "scan.max_concurrent_targets") {
		t.Errorf("scrape with the cap full: %d %q, want 503 naming scan.max_concurrent_targets", rec.Code, rec.Body.String())
	}
	h.limiter.give()
	rec = scrape()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "\nlock_exporter_up 1\n") {
		t.Errorf("scrape with a free slot: %d\n%s", rec.Code, rec.Body.String())
	}
	for outcome, want := range map[string]float64{outcomeBusy: 1, outcomeServed: 1} {
		if got := testkit.MetricValue(t, reg, "lock_exporter_target_scrapes_total", "target", "live", "outcome", outcome); got != want {
			t.Errorf("lock_exporter_target_scrapes_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if h.limiter.inUse() != 0 || ts.byName["live"].gate.users != 0 {
		t.Errorf("after the scrape: %d slots held, %d users; want none", h.limiter.inUse(), ts.byName["live"].gate.users)
	}
}

// TestScanLimiter: one slot per target however many scrapes of it run, handed back with the
// last; a second target waits for it; a wait ends with the context.
func TestScanLimiter(t *testing.T) {
	l := newScanLimiter(1)
	a := &target{name: "a", sharedScanner: &sharedScanner{gate: newTargetGate()}}
	b := &target{name: "b", sharedScanner: &sharedScanner{gate: newTargetGate()}}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	ctx := context.Background()
	if err := l.enter(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := l.enter(short(), a); err != nil { // joins a's slot even with the cap full
		t.Fatalf("second scrape of a: %v", err)
	}
	if err := l.enter(short(), b); err != errBusy {
		t.Fatalf("b with a holding the only slot: %v, want errBusy", err)
	}
	l.leave(a)
	if err := l.enter(short(), b); err != errBusy {
		t.Fatalf("b with one scrape of a left: %v, want errBusy", err)
	}
	l.leave(a)
	if err := l.enter(short(), b); err != nil {
		t.Fatalf("b after a's last scrape: %v", err)
	}
	l.leave(b)

	// Many scrapes of three targets through two slots: all get through, nothing stays held.
	l = newScanLimiter(2)
	targets := []*target{a, b, {name: "c", sharedScanner: &sharedScanner{gate: newTargetGate()}}}
	var held, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 60 {
		tg := targets[i%3]
		wg.Go(func() {
			if err := l.enter(ctx, tg); err != nil {
				t.Error(err)
				return
			}
			n := held.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if s := l.inUse(); s > 2 {
				t.Errorf("%d slots in use, cap 2", s)
			}
			time.Sleep(time.Millisecond)
			held.Add(-1)
			l.leave(tg)
		})
	}
	wg.Wait()
	if l.inUse() != 0 || a.gate.users+b.gate.users+targets[2].gate.users != 0 {
		t.Errorf("after all scrapes: %d slots, users %d %d %d", l.inUse(), a.gate.users, b.gate.users, targets[2].gate.users)
	}
}
