package exporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// reloadingExporter serves the configuration file path with POST /-/reload on, as
// lock-exporter --web.enable-lifecycle does, until the test ends.
func reloadingExporter(t *testing.T, path string) (base string) {
	t.Helper()
	read := func() (Scope, error) {
		cfg, err := exporterconfig.Load(path)
		if err != nil {
			return Scope{}, err
		}
		return Scope{Config: cfg, TargetsOnly: cfg.TargetsWithDefaultRedis()}, cfg.Validate()
	}
	scope, err := read()
	if err != nil {
		t.Fatal(err)
	}
	addrs := make(chan []string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Options{
			Config:      scope.Config,
			TargetsOnly: scope.TargetsOnly,
			Web:         Web{ListenAddresses: []string{"127.0.0.1:0"}, TelemetryPath: "/metrics", EnableLifecycle: true},
			Logger:      slog.New(slog.DiscardHandler),
			Reload:      read,
			Listening:   func(a []string) { addrs <- a },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return "http://" + a[0]
	case err := <-served:
		t.Fatalf("Serve returned %v before listening", err)
	}
	return ""
}

// request sends method to url with the scrape timeout header and returns status and body.
func request(t *testing.T, method, url string, scrapeTimeout string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if scrapeTimeout != "" {
		req.Header.Set(ScrapeTimeoutHeader, scrapeTimeout)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// clientsBesides counts the connections Redis lists other than the lister's own: the exporter's.
func clientsBesides(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	ctx := context.Background()
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if line != "" && !strings.Contains(line, "cmd=client|list") {
			n++
		}
	}
	return n
}

// TestReloadKeepsTheScanCap: with scan.max_concurrent_targets 1, a target scan in flight holds
// the only slot across reloads: a scrape of another target after the reloads waits and is
// refused (503), and that target's Redis sees no scanning connection. (Each reload used to
// start a fresh cap, so every reload let one more scan run.)
func TestReloadKeepsTheScanCap(t *testing.T) {
	const password = "reload-cap-pw"
	slow, _ := testkit.StartPasswordRedis(t, password)
	other, otherClient := testkit.StartPasswordRedis(t, password)
	path := testkit.MultiTargetConfig(t, "scan:\n  max_concurrent_targets: 1\n",
		[3]string{"slow", slow.Addr, password}, [3]string{"other", other.Addr, password})
	base := reloadingExporter(t, path)

	slow.Pause()
	defer slow.Resume()
	var wg sync.WaitGroup
	wg.Go(func() { request(t, http.MethodGet, base+scrapeURL("slow"), "3") }) // holds the slot for about 2.5s
	testkit.Eventually(t, 10*time.Second, "the slow target's scan to hold the slot", func() bool {
		_, body := request(t, http.MethodGet, base+"/metrics", "")
		return strings.Contains(body, `lock_exporter_target_scrapes_total{outcome="served",target="slow"} 1`)
	})
	for range 3 {
		if code, body := request(t, http.MethodPost, base+ReloadPath, ""); code != http.StatusOK {
			t.Fatalf("reload: %d %q", code, body)
		}
	}
	if code, body := request(t, http.MethodGet, base+scrapeURL("other"), "0.8"); code != http.StatusServiceUnavailable {
		t.Errorf("scrape of another target while the only slot is held, after reloads: %d, want 503\n%s", code, body)
	}
	if n := clientsBesides(t, otherClient); n != 0 {
		t.Errorf("the other target's Redis sees %d exporter connections while the cap is full, want 0", n)
	}
	wg.Wait()
	slow.Resume()
	if code, body := request(t, http.MethodGet, base+scrapeURL("other"), "5"); code != http.StatusOK || !strings.Contains(body, "lock_exporter_up 1") {
		t.Errorf("scrape of the other target once the slot is free: %d\n%s", code, body)
	}
	if n := clientsBesides(t, otherClient); n == 0 {
		t.Error("the other target's Redis sees no exporter connection after its scrape: the count above proves nothing")
	}
}

// TestReloadKeepsTheTargetsPass: reloads that leave a target's settings unchanged keep its
// client and scanner, so scrapes racing the reloads share one pass and one pool: Redis accepts
// no more connections than one pool holds. (Each reload used to open a new pool and start a
// pass beside the one in flight.)
func TestReloadKeepsTheTargetsPass(t *testing.T) {
	const password = "reload-pass-pw"
	srv, rdb := testkit.StartPasswordRedis(t, password)
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := range 20000 {
		pipe.Set(ctx, fmt.Sprintf("jobs:%d", i), "token", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	path := testkit.MultiTargetConfig(t, "", [3]string{"main", srv.Addr, password})
	base := reloadingExporter(t, path)
	accepted := func() int64 {
		info, err := rdb.Info(ctx, "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_connections_received:"); ok {
				fmt.Sscan(v, &n)
			}
		}
		return n
	}
	before := accepted()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code, body := request(t, http.MethodGet, base+scrapeURL("main"), "5"); code != http.StatusOK || !strings.Contains(body, `lock_keys{lock_namespace="jobs"} 20000`) {
					t.Errorf("scrape during reloads: %d", code)
					return
				}
			}
		})
	}
	for range 10 {
		if code, body := request(t, http.MethodPost, base+ReloadPath, ""); code != http.StatusOK {
			t.Errorf("reload: %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	// The lister's own connection (rdb) was open before; the exporter dialled the rest.
	if dialled, pool := accepted()-before, int64(collectors.ConnectionsPerNode()); dialled > pool {
		t.Errorf("Redis accepted %d exporter connections across 10 reloads, more than one pool (%d)", dialled, pool)
	}
}
