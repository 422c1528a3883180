package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestUncountedTypeHint: a Redisson lock (a hash) under a namespace declared without its type
// is reported by one WARN line naming the fix and by lock_exporter_namespace_uncounted_keys,
// however many scrapes follow; the lock token (the hash's field) appears in neither.
func TestUncountedTypeHint(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const token = "9f1c2d3e-redisson-client-uuid:57"
	for _, key := range []string{"redisson:lock:{order-1}", "redisson:lock:{order-2}"} {
		if err := c.HSet(ctx, key, token, 1).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.PExpire(ctx, key, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s := startServer(t, nil, "--redis.addr", srv.Addr, "--namespace", "orders=redisson:lock:*")

	const series = `lock_exporter_namespace_uncounted_keys{lock_namespace="orders",type="hash"}`
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var code int
		code, body = s.get(t, "/metrics", 5*time.Second)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d", code)
		}
		if _, ok := metricValue(body, series); ok || time.Now().After(deadline) {
			break
		}
	}
	wantMetric(t, body, series, 2)
	wantMetric(t, body, `lock_keys{lock_namespace="orders"}`, 0)
	for range 3 {
		s.get(t, "/metrics", 5*time.Second)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	logs := s.stderr.String()
	var hints []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "does not count") {
			hints = append(hints, line)
		}
	}
	if len(hints) != 1 {
		t.Fatalf("want one hint line, got %d:\n%s", len(hints), logs)
	}
	for _, want := range []string{"level=WARN", "lock_namespace=orders", "type=hash", "keys=2", "--type hash", "types: [hash]"} {
		if !strings.Contains(hints[0], want) {
			t.Errorf("hint line lacks %q: %s", want, hints[0])
		}
	}
	if strings.Contains(logs, token) || strings.Contains(body, token) {
		t.Errorf("the lock token leaked into logs or metrics")
	}
}
