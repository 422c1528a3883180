package collectors

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// lineLog keeps the messages of the records logged at WARN and above.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Enabled(_ context.Context, lvl slog.Level) bool { return lvl >= slog.LevelWarn }
func (l *lineLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	return nil
}
func (l *lineLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lineLog) WithGroup(string) slog.Handler      { return l }

func (l *lineLog) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.lines {
		if m == msg {
			n++
		}
	}
	return n
}

// TestFailedScrapeLogsOneLine: in auto mode with an indexed and a walked namespace, a scrape
// of a Redis that went away logged "lock key scan failed" twice, once for the index and once
// for the walk beside it. One failed scrape is one line.
func TestFailedScrapeLogsOneLine(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	c.Set(ctx, "jobs:1", "t", time.Minute)
	log := &lineLog{}
	s, err := NewScanner(c, Options{
		Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}, {Name: "suffix", Pattern: "*:lock"}},
		Mode:       ModeAuto, Logger: slog.New(log), Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitCurrent(t, s)
	srv.Kill()
	const failed = "lock key scan failed"
	for i := 1; i <= 3; i++ {
		if res := s.Scan(ctx); res.Up {
			t.Fatal("scrape of a killed server reported up")
		}
		time.Sleep(300 * time.Millisecond) // the walk's pass logs as it ends
		if got := log.count(failed); got != i {
			t.Fatalf("after %d failed scrapes: %d %q lines, want %d: %q", i, got, failed, i, log.lines)
		}
	}
}
