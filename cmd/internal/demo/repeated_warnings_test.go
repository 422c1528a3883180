package demo

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

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
