package exporter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestMain checks for leaked goroutines once go-redis' redials have ended: these tests serve a
// Redis that refuses connections (testkit.VerifyTestMain).
func TestMain(m *testing.M) {
	testkit.VerifyTestMain(m)
}

// testOptions serve one namespace of a Redis nothing listens on: Serve must work without one
// (lock_exporter_up says so).
func testOptions(t *testing.T) Options {
	t.Helper()
	cfg := exporterconfig.Defaults()
	cfg.Redis.Addr = "127.0.0.1:1"
	cfg.Namespaces = []exporterconfig.Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return Options{
		Config: cfg,
		Web:    Web{ListenAddresses: []string{"127.0.0.1:0"}, TelemetryPath: "/metrics"},
		Logger: slog.New(slog.DiscardHandler),
	}
}

// TestServeErrorKinds checks the split the commands' exit statuses rest on: options Serve cannot
// use match ErrUsage (exit 2), a port already taken does not (exit 1).
func TestServeErrorKinds(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name      string
		change    func(*Options)
		wantUsage bool
		wantText  string
	}{
		{"telemetry path not absolute", func(o *Options) { o.Web.TelemetryPath = "metrics" }, true, `--web.telemetry-path "metrics"`},
		{"telemetry path is the health path", func(o *Options) { o.Web.TelemetryPath = healthPath }, true, "--web.telemetry-path"},
		{"telemetry path is the targets' scrape path", func(o *Options) { o.Web.TelemetryPath = ScrapePath }, true, `--web.telemetry-path "/scrape"`},
		{"telemetry path is the reload path", func(o *Options) { o.Web.TelemetryPath = ReloadPath }, true, `--web.telemetry-path "/-/reload"`},
		// http.ServeMux reads these as patterns, not paths: a space separates a method, braces
		// are wildcards. Registering them panicked ("invalid method", "conflicts with").
		{"telemetry path with a space", func(o *Options) { o.Web.TelemetryPath = "/m etrics" }, true, `--web.telemetry-path "/m etrics"`},
		{"telemetry path with a method", func(o *Options) { o.Web.TelemetryPath = "/ GET" }, true, `--web.telemetry-path "/ GET"`},
		{"telemetry path with a wildcard", func(o *Options) { o.Web.TelemetryPath = "/{x...}" }, true, `--web.telemetry-path "/{x...}"`},
		{"telemetry path with a segment wildcard", func(o *Options) { o.Web.TelemetryPath = "/{x}/metrics" }, true, `--web.telemetry-path "/{x}/metrics"`},
		{"telemetry path with a tab", func(o *Options) { o.Web.TelemetryPath = "/metrics\t" }, true, `--web.telemetry-path "/metrics\t"`},
		{"telemetry path with a query", func(o *Options) { o.Web.TelemetryPath = "/metrics?x=1" }, true, `--web.telemetry-path "/metrics?x=1"`},
		{"telemetry path not clean", func(o *Options) { o.Web.TelemetryPath = "/a/../metrics" }, true, `--web.telemetry-path "/a/../metrics"`},
		{"telemetry path with a double slash", func(o *Options) { o.Web.TelemetryPath = "//metrics" }, true, `--web.telemetry-path "//metrics"`},
		{"targets only without targets", func(o *Options) { o.TargetsOnly = true }, true, "no Redis to scan"},
		{"listen address without port", func(o *Options) { o.Web.ListenAddresses = []string{"9866"} }, true, `--web.listen-address "9866"`},
		{"web config missing", func(o *Options) { o.Web.ConfigFile = "/nonexistent/web.yml" }, true, "--web.config.file"},
		{"port taken", func(o *Options) { o.Web.ListenAddresses = []string{taken.Addr().String()} }, false, `--web.listen-address "` + taken.Addr().String() + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			tt.change(&opts)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Serve(ctx, opts)
			if err == nil {
				t.Fatal("Serve returned nil")
			}
			if errors.Is(err, ErrUsage) != tt.wantUsage {
				t.Errorf("errors.Is(%v, ErrUsage) = %v, want %v", err, !tt.wantUsage, tt.wantUsage)
			}
			if !strings.HasPrefix(err.Error(), tt.wantText) {
				t.Errorf("error %q, want it to start with %q", err, tt.wantText)
			}
		})
	}
}

// TestServeExtraAndShutdown serves a Config with an extra gatherer, as the demo does: the extra
// metrics appear beside the exporter's, and cancelling the context returns nil.
func TestServeExtraAndShutdown(t *testing.T) {
	opts := testOptions(t)
	extra := newExtraRegistry(t)
	opts.Extra = extra
	addrs := make(chan []string, 1)
	opts.Listening = func(a []string) { addrs <- a }
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, opts) }()
	var addr string
	select {
	case a := <-addrs:
		addr = a[0]
	case err := <-served:
		cancel()
		t.Fatalf("Serve returned %v before listening", err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	for _, want := range []string{"demo_extra_total 1", "lock_exporter_up 0", `lock_exporter_build_info{`, `promhttp_metric_handler_requests_total{code="200"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after cancel: %v, want nil", err)
	}
}

func newExtraRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "demo_extra_total", Help: "An extra metric."})
	c.Inc()
	reg.MustRegister(c)
	return reg
}

// TestServeTakenAddressTouchesNoRedis: an exporter that cannot bind its address exits with that
// one error; it must not have dialled Redis or started an index build first, whose log line
// would come before the error the user needs.
func TestServeTakenAddressTouchesNoRedis(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	redis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer redis.Close()
	opts := testOptions(t)
	opts.Config.Redis.Addr = redis.Addr().String()
	opts.Web.ListenAddresses = []string{taken.Addr().String()}
	logged := &recordCounter{}
	opts.Logger = slog.New(logged)
	if err := Serve(context.Background(), opts); err == nil || errors.Is(err, ErrUsage) {
		t.Fatalf("Serve = %v, want the listen error", err)
	}
	if n := logged.count(); n != 0 {
		t.Errorf("Serve logged %d records before failing to listen", n)
	}
	if err := redis.(*net.TCPListener).SetDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if conn, err := redis.Accept(); err == nil {
		conn.Close()
		t.Error("Serve dialled Redis before failing to listen")
	}
}

// recordCounter is a slog handler that counts the records it is given.
type recordCounter struct {
	mu sync.Mutex
	n  int
}

func (h *recordCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordCounter) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	return nil
}
func (h *recordCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordCounter) WithGroup(string) slog.Handler      { return h }
func (h *recordCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
