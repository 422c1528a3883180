package demo

import (
	"bytes"
	"context"
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
	line := w.StatusLine()
	shape := regexp.MustCompile(`^0s \| now: 0 leases held \| since start: 0 acquires, 0 busy, 0 failed renews, ` +
		`0 not-owned renews/releases, 0 abandoned, 0 fenced writes rejected \| turbulence on$`)
	if !shape.MatchString(line) {
		t.Errorf("status line %q", line)
	}
	legend := strings.Join(w.StatusLegend(), "\n")
	for _, want := range []string{`"now" is the current value`, `"since start" are totals`, "Turbulence is", "every 20s"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend lacks %q:\n%s", want, legend)
		}
	}
	steps := strings.Join(NextSteps("127.0.0.1:6400", "127.0.0.1:9866", w.Namespaces()), "\n")
	for _, want := range []string{
		"lock-exporter inspect --redis.addr 127.0.0.1:6400 --namespace 'scheduler=lockwatch-demo:scheduler:*'",
		"http://127.0.0.1:9866/metrics", "dashboards/lockwatch-overview.json", "alerts/*.yml",
	} {
		if !strings.Contains(steps, want) {
			t.Errorf("next steps lack %q:\n%s", want, steps)
		}
	}
}

// TestRepeatedWarningsAreCounted: the first warning of each kind is printed (with a note), its
// repeats are counted for the status line, and errors and info lines always pass.
func TestRepeatedWarningsAreCounted(t *testing.T) {
	var buf bytes.Buffer
	h := newRepeatCounter(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	log := slog.New(h).With("replica", "a")
	for range 5 {
		log.Warn("lock renewal failed")
	}
	log.Warn("lock renewal found the lock not owned")
	log.Error("lock abandoned")
	log.Error("lock abandoned")
	log.Info("acquired")
	log.WithGroup("g").Warn("lock renewal failed") // same kind through a derived logger
	out := buf.String()
	if n := strings.Count(out, `msg="lock renewal failed"`); n != 1 {
		t.Errorf("renewal warning printed %d times:\n%s", n, out)
	}
	if n := strings.Count(out, "lock abandoned"); n != 2 {
		t.Errorf("errors printed %d times, want 2:\n%s", n, out)
	}
	for _, want := range []string{"not owned", "acquired", "counted in the status line", "replica=a"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := h.repeats(); got != 5 {
		t.Errorf("repeats = %d, want 5", got)
	}
	if !h.Enabled(context.Background(), slog.LevelInfo) || h.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("Enabled does not follow the wrapped handler")
	}
}
