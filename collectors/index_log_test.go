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

// loggingScanner starts a server holding one lock key and a Scanner over it in mode, with an
// indexed namespace and one the index cannot serve (a pattern without a literal prefix), whose
// log lines go to the returned lineLog; in auto mode it returns once the index is current.
func loggingScanner(t *testing.T, mode ScanMode, timeout time.Duration) (*redistest.Server, *Scanner, *lineLog) {
	t.Helper()
	srv := redistest.Start(t)
	c := srv.Client(t)
	c.Set(context.Background(), "jobs:1", "t", time.Minute)
	log := &lineLog{}
	s, err := NewScanner(c, Options{
		Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}, {Name: "suffix", Pattern: "*:lock"}},
		Mode:       mode, Logger: slog.New(log), Timeout: timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if mode == ModeAuto {
		waitCurrent(t, s)
	}
	return srv, s, log
}

// TestFailedScrapeLogsOneLine: in auto mode with an indexed and a walked namespace, a scrape
// of a Redis that went away logged "lock key scan failed" twice, once for the index and once
// for the walk beside it. One failed scrape is one line.
func TestFailedScrapeLogsOneLine(t *testing.T) {
	ctx := context.Background()
	srv, s, log := loggingScanner(t, ModeAuto, 2*time.Second)
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

// TestConcurrentFailedScrapesLogOneLine: scrapes that run together against a Redis that does
// not answer share one line, in auto mode as in walk mode (where they join one walk). Auto mode
// logged one line per scrape: 40 lines for a burst of 40 (--web.max-requests).
func TestConcurrentFailedScrapesLogOneLine(t *testing.T) {
	for _, mode := range []ScanMode{ModeWalk, ModeAuto} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			srv, s, log := loggingScanner(t, mode, 10*time.Second)
			srv.Pause()
			defer srv.Resume()
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
					defer cancel()
					s.Scan(sctx)
				}()
			}
			wg.Wait()
			// The walk's pass logs when its last commands end, after their grace.
			for end := time.Now().Add(10 * time.Second); log.count("lock key scan failed") == 0 && time.Now().Before(end); {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			if got := log.count("lock key scan failed"); got != 1 {
				t.Fatalf("20 concurrent scrapes of a paused Redis: %d lines, want 1: %q", got, log.lines)
			}
		})
	}
}
