package collectors

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
)

// seeder creates lock keys with a chosen TTL and idle time. RESTORE ... IDLETIME sets a key's
// LRU clock directly, so tests get exact, distinct idle times without sleeping.
type seeder struct {
	c    redis.UniversalClient
	dump string
}

func newSeeder(t testing.TB, c redis.UniversalClient) *seeder {
	t.Helper()
	ctx := context.Background()
	const tmpl = "lockwatch-test:template"
	if err := c.Set(ctx, tmpl, "owner-token-not-for-metrics", 0).Err(); err != nil {
		t.Fatalf("seed template: %v", err)
	}
	dump, err := c.Dump(ctx, tmpl).Result()
	if err != nil {
		t.Fatalf("dump template: %v", err)
	}
	if err := c.Del(ctx, tmpl).Err(); err != nil {
		t.Fatalf("delete template: %v", err)
	}
	return &seeder{c: c, dump: dump}
}

// key creates key with ttl (0 = no expiry) and idle seconds of idle time.
func (s *seeder) key(t testing.TB, key string, ttl time.Duration, idle int) {
	t.Helper()
	args := []any{"RESTORE", key, ttl.Milliseconds(), s.dump, "REPLACE"}
	if idle > 0 {
		args = append(args, "IDLETIME", idle)
	}
	if err := s.c.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("restore %q: %v", key, err)
	}
}

// slowPipelines delays every pipeline, standing in for a slow or distant Redis.
type slowPipelines struct {
	redishook.PassThrough
	delay time.Duration
}

func (h slowPipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		return next(ctx, cmds)
	}
}

// client returns a go-redis client configured as the exporter configures its own: socket reads
// follow the context deadline and a dead server is reported at once, not after retries.
func client(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialerRetries:         1,
		DisableIdentity:       true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sample is one gathered series.
type sample struct {
	labels map[string]string
	value  float64
}

// gather collects c on a pedantic registry (which also checks descriptors and help strings)
// and returns the series by metric name.
func gather(t testing.TB, c prometheus.Collector) map[string][]sample {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatalf("register: %v", err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string][]sample{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			s := sample{labels: map[string]string{}, value: value(m)}
			for _, lp := range m.GetLabel() {
				s.labels[lp.GetName()] = lp.GetValue()
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// only returns the one series of name with the given lock_namespace, failing when absent.
func only(t testing.TB, got map[string][]sample, name, ns string) float64 {
	t.Helper()
	for _, s := range got[name] {
		if ns == "" || s.labels[nsLabel] == ns {
			return s.value
		}
	}
	t.Fatalf("no %s{lock_namespace=%q} in %v", name, ns, got[name])
	return 0
}

func absent(t testing.TB, got map[string][]sample, name, ns string) {
	t.Helper()
	for _, s := range got[name] {
		if s.labels[nsLabel] == ns {
			t.Fatalf("%s{lock_namespace=%q} = %v, want absent", name, ns, s.value)
		}
	}
}
