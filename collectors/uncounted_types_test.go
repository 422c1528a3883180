package collectors

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// syncBuffer is a log sink the look's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUncountedTypes: the look reports keys under a namespace's pattern of a type it does not
// count, by type, with one log line naming the fix, and nothing for a namespace that declares
// the type or for keys of other types outside every pattern.
func TestUncountedTypes(t *testing.T) {
	tests := []struct {
		name      string
		ns        Namespace
		want      map[string]float64 // type → lock_exporter_namespace_uncounted_keys
		wantInLog []string
	}{
		{name: "hash locks, no types", ns: Namespace{Name: "redisson", Pattern: "redisson:lock:*"},
			want: map[string]float64{"hash": 3}, wantInLog: []string{"type=hash", "keys=3", "types: [hash]", "--type hash"}},
		{name: "hash locks, declared", ns: Namespace{Name: "redisson", Pattern: "redisson:lock:*", Types: []string{TypeHash}}},
		{name: "strings and hashes, strings declared", ns: Namespace{Name: "mixed", Pattern: "mixed:*", Types: []string{TypeString}},
			want: map[string]float64{"hash": 1}, wantInLog: []string{"types: [string, hash]", "--type string,hash"}},
		{name: "a list under the pattern", ns: Namespace{Name: "jobs", Pattern: "jobs:*"},
			want: map[string]float64{"list": 1}, wantInLog: []string{"type=list", "narrow the pattern"}},
		{name: "other types outside the pattern", ns: Namespace{Name: "orders", Pattern: "orders:lock:*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := client(t, srv.Addr)
			ctx := context.Background()
			for i := range 3 {
				key := "redisson:lock:{order-" + string(rune('a'+i)) + "}"
				c.HSet(ctx, key, "client-uuid:1", 1)
			}
			c.Set(ctx, "mixed:a", "token", time.Minute)
			c.HSet(ctx, "mixed:b", "client-uuid:1", 1)
			c.Set(ctx, "jobs:1", "token", time.Minute)
			c.RPush(ctx, "jobs:queue", "job")
			c.Set(ctx, "orders:lock:1", "token", time.Minute)
			c.HSet(ctx, "orders:meta", "f", "v")
			c.ZAdd(ctx, "orders:index")

			var logs syncBuffer
			s, err := NewScanner(c, Options{Namespaces: []Namespace{tt.ns}, ReportUncountedTypes: true,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			<-s.uncounted.firstRun
			for range 2 { // scrapes never log the hint again
				gather(t, s.Collector(ctx))
			}
			got := map[string]float64{}
			for _, smp := range gather(t, s.Collector(ctx))["lock_exporter_namespace_uncounted_keys"] {
				if smp.labels[nsLabel] != tt.ns.Name {
					t.Errorf("series of namespace %q", smp.labels[nsLabel])
				}
				got[smp.labels["type"]] = smp.value
			}
			if len(got) != len(tt.want) {
				t.Fatalf("uncounted keys = %v, want %v", got, tt.want)
			}
			for typ, n := range tt.want {
				if got[typ] != n {
					t.Errorf("uncounted %s keys = %v, want %v", typ, got[typ], n)
				}
			}
			hints := strings.Count(logs.String(), "does not count")
			if want := len(tt.want); hints != want {
				t.Fatalf("%d hint lines, want %d:\n%s", hints, want, logs.String())
			}
			for _, w := range tt.wantInLog {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, logs.String())
				}
			}
		})
	}
}

// TestUncountedTypesOff: without ReportUncountedTypes the Scanner sends no TYPE and exports
// no series (inspect, lockbench and library users who did not ask).
func TestUncountedTypesOff(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	c.HSet(context.Background(), "redisson:lock:{a}", "client-uuid:1", 1)
	s, err := NewScanner(c, Options{Namespaces: []Namespace{{Name: "redisson", Pattern: "redisson:lock:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.uncounted != nil {
		t.Fatal("look started without ReportUncountedTypes")
	}
	if got := gather(t, s.Collector(context.Background()))["lock_exporter_namespace_uncounted_keys"]; len(got) != 0 {
		t.Fatalf("series without the option: %v", got)
	}
}
