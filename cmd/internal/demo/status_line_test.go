package demo

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0 leases"},
		{1, "1 lease"},
		{2, "2 leases"},
		// a counter summed from float64s must not show float noise
		{0.1 + 0.2 + 0.7, "1 lease"},
		{1867.9999999999998, "1868 leases"},
	}
	for _, tt := range tests {
		if got := count(tt.v, "lease", "leases"); got != tt.want {
			t.Errorf("count(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestStatusLineSaysWhatIsCurrentAndWhatIsATotal runs nothing: a fresh workload's status line
// already has its shape.
func TestStatusLineSaysWhatIsCurrentAndWhatIsATotal(t *testing.T) {
	w, err := New(Options{Addr: "127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	shape := regexp.MustCompile(`^0s \| now: 0 leases held \| since start: 0 acquires, 0 busy, 0 failed renews, ` +
		`0 not-owned renews/releases, 0 abandoned, 0 fenced writes rejected \| ` +
		`redis-py/Redisson: 0 holds, 0 releases refused as not owned \| (.*) \| turbulence on$`)
	for _, tt := range []struct {
		lc   Lifecycle
		want string
	}{
		{Lifecycle{}, "exporter: lock lifecycle not followed"},
		{Lifecycle{Followed: true}, "exporter saw (any client): 0 lapses, 0 takeovers"},
		{Lifecycle{Followed: true, Lapses: 3, Takeovers: 1}, "exporter saw (any client): 3 lapses, 1 takeover"},
		{Lifecycle{Lapses: 3, Takeovers: 2}, "exporter saw (any client): 3 lapses, 2 takeovers (not following now)"},
	} {
		line := w.StatusLine(tt.lc)
		m := shape.FindStringSubmatch(line)
		if m == nil || m[1] != tt.want {
			t.Errorf("status line %q; want the exporter's part %q", line, tt.want)
		}
	}
	legend := strings.Join(w.StatusLegend(), "\n")
	for _, want := range []string{`"now" is the current value`, `"since start" are totals`, "Turbulence is", "every 20s"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend lacks %q:\n%s", want, legend)
		}
	}
	steps := strings.Join(NextSteps("127.0.0.1:6400", "127.0.0.1:9866", "./bin/lock-exporter", w.Namespaces()), "\n")
	for _, want := range []string{
		"./bin/lock-exporter inspect --redis.addr 127.0.0.1:6400 --namespace 'scheduler=lockwatch-demo:scheduler:*'",
		"http://127.0.0.1:9866/metrics", "dashboards-import/lockwatch-overview.json", "alerts/*.yml",
	} {
		if !strings.Contains(steps, want) {
			t.Errorf("next steps lack %q:\n%s", want, steps)
		}
	}
}
