package demo

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestStartRedisAndStop(t *testing.T) {
	ctx := context.Background()
	r, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping the started server: %v", err)
	}
	r.Stop()
	r.Stop() // a second Stop is harmless
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Error("server still answers after Stop")
	}
	if _, err := os.Stat(r.Dir()); !os.IsNotExist(err) {
		t.Errorf("server directory %s not removed: %v", r.Dir(), err)
	}
}

func TestStartRedisWithoutBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := StartRedis(context.Background()); err != ErrNoRedisServer {
		t.Fatalf("err = %v, want ErrNoRedisServer", err)
	}
}

// TestExporterConfigRoundTrips checks the demo's exporter configuration: valid, one namespace
// per demo namespace with its declared TTL and renew interval, and unchanged when written as a
// YAML file and loaded the way lock-exporter --config.file loads it (the end-to-end test runs
// the exporter binary so).
func TestExporterConfigRoundTrips(t *testing.T) {
	cfg, err := ExporterConfig("127.0.0.1:6379", Namespaces(DefaultPrefix))
	if err != nil {
		t.Fatal(err)
	}
	var want []exporterconfig.Namespace
	for _, ns := range Namespaces(DefaultPrefix) {
		want = append(want, exporterconfig.Namespace{
			Name: ns.Name, Pattern: ns.Pattern,
			ExpectedTTL:           exporterconfig.Duration(ns.TTL),
			ExpectedRenewInterval: exporterconfig.Duration(ns.RenewInterval),
		})
	}
	if !reflect.DeepEqual(cfg.Namespaces, want) {
		t.Errorf("namespaces = %+v, want %+v", cfg.Namespaces, want)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "exporter.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := exporterconfig.Load(path)
	if err != nil {
		t.Fatalf("written config does not load: %v\n%s", err, data)
	}
	// Compared as YAML: loading turns the unset lists into empty ones.
	again, err := yaml.Marshal(loaded)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("loaded config differs from the one written:\n%s\nwant\n%s", again, data)
	}
}

func TestNamespacePoliciesMatchWhatTheExporterIsTold(t *testing.T) {
	for _, ns := range Namespaces(DefaultPrefix) {
		if ns.policy.TTL != ns.TTL {
			t.Errorf("%s: policy TTL %v, declared %v", ns.Name, ns.policy.TTL, ns.TTL)
		}
		renews := !ns.policy.DisableRenewal && ns.policy.RenewInterval > 0
		if renews && ns.policy.RenewInterval != ns.RenewInterval {
			t.Errorf("%s: policy renews every %v, declared %v", ns.Name, ns.policy.RenewInterval, ns.RenewInterval)
		}
		if ns.policy.Release == 0 && !ns.policy.DisableRenewal && ns.RenewInterval == 0 {
			t.Errorf("%s: renewed namespace declares no renew interval", ns.Name)
		}
	}
}

func TestEscapeGlob(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lockwatch-demo:*", "lockwatch-demo:*"},
		{"{lockwatch-demo:*", "{lockwatch-demo:*"},
		{"a*b?[c]\\:*", `a\*b\?\[c\]\\:*`},
	}
	for _, tt := range tests {
		if got := escapeGlob(tt.in); got != tt.want {
			t.Errorf("escapeGlob(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"", "redis://host:1/notadb"} {
		if _, err := New(Options{Addr: addr}); err == nil {
			t.Errorf("New(%q) succeeded", addr)
		}
	}
}

func TestRunStopsAndCleansUp(t *testing.T) {
	ctx := context.Background()
	r, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	w, err := New(Options{Addr: r.Addr(), TurbulencePeriod: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Run until the first turbulence cycle has produced an abandonment (about 9s in on an idle
	// machine), not for a fixed time: a starved machine gets there later, an idle one stops
	// sooner.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	var tot libraryTotals
	for giveUp := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if tot, err = w.totals(); err != nil {
			t.Fatal(err)
		}
		if tot.Acquired > 0 && tot.Abandoned > 0 {
			break
		}
		if time.Now().After(giveUp) {
			t.Errorf("totals after 60s: %+v; want acquisitions and an abandonment", tot)
			break
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rdb.Close()
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("keys left after Run: %d (%v)", n, err)
	}
}

// TestTurbulenceOffRemovesTheLockWithoutTTL checks the recovery path the end-to-end test
// relies on: with turbulence off, the lock without expiry is deleted as the runbook says.
func TestTurbulenceOffRemovesTheLockWithoutTTL(t *testing.T) {
	ctx := context.Background()
	r, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	w, err := New(Options{Addr: r.Addr(), TurbulencePeriod: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rdb.Close()
	legacy := DefaultPrefix + "reconciler:legacy-cron"
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()

	waitFor("the lock without TTL", func() bool {
		ttl, err := rdb.TTL(ctx, legacy).Result()
		return err == nil && ttl == -1 // exists, no expiry
	})
	w.SetTurbulence(false)
	waitFor("the lock without TTL to be deleted", func() bool {
		n, err := rdb.Exists(ctx, legacy).Result()
		return err == nil && n == 0
	})
	if line := w.StatusLine(); !strings.Contains(line, "| turbulence off") {
		t.Errorf("status line %q does not say turbulence is off", line)
	}
	w.SetTurbulence(true)
	waitFor("the lock without TTL to return", func() bool {
		n, err := rdb.Exists(ctx, legacy).Result()
		return err == nil && n == 1
	})
}
