package collectors

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestNamespaceErrorIsIsolated scans as an ACL user that may read ok:* keys only: PTTL on the
// secret namespace's keys fails with NOPERM. That namespace alone is marked failed
// (lock_exporter_scrape_success 0, its counts absent); the other keeps its complete result and
// up stays 1. (A failure used to blank every namespace and set up 0.)
func TestNamespaceErrorIsIsolated(t *testing.T) {
	srv := redistest.Start(t)
	admin := client(t, srv.Addr)
	ctx := context.Background()
	for _, k := range []string{"ok:1", "ok:2", "secret:1"} {
		if err := admin.Set(ctx, k, "token", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.Do(ctx, "ACL", "SETUSER", "scoped", "reset", "on", ">pw", "-@all",
		"+scan", "+pttl", "+object|idletime", "+dbsize", "+type", "%R~ok:*"); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "scoped", Password: "pw",
		ContextTimeoutEnabled: true, MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })

	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "ok", Pattern: "ok:*"}, {Name: "secret", Pattern: "secret:*"}}})
	res := scanWithin(t, s, 5*time.Second)
	okNS, secret := res.Namespaces[0], res.Namespaces[1]
	if !res.Up || okNS.Err != nil || !okNS.Complete || okNS.Keys != 2 {
		t.Errorf("ok: up=%v err=%v complete=%v keys=%d, want up, complete with 2 keys", res.Up, okNS.Err, okNS.Complete, okNS.Keys)
	}
	if secret.Err == nil || secret.Complete {
		t.Errorf("secret: err=%v complete=%v, want a NOPERM error, incomplete", secret.Err, secret.Complete)
	}
	got := gather(t, s.Collector(ctx))
	for _, tt := range []struct {
		metric, ns string
		want       float64
	}{
		{"lock_exporter_up", "", 1},
		{"lock_exporter_scrape_success", "ok", 1}, {"lock_exporter_scrape_complete", "ok", 1}, {"lock_keys", "ok", 2},
		{"lock_exporter_scrape_success", "secret", 0}, {"lock_exporter_scrape_complete", "secret", 0},
	} {
		if v := only(t, got, tt.metric, tt.ns); v != tt.want {
			t.Errorf("%s{%s} = %v, want %v", tt.metric, tt.ns, v, tt.want)
		}
	}
	absent(t, got, "lock_keys", "secret")

	// Every namespace failing is Redis answering with errors for everything: up 0.
	only := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "secret", Pattern: "secret:*"}}})
	if res := scanWithin(t, only, 5*time.Second); res.Up || res.Err == nil {
		t.Errorf("all namespaces failing: up=%v err=%v, want up 0 with the error", res.Up, res.Err)
	}
}
