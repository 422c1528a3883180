package demo

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// repeatCounter keeps the demo's terminal readable: the injected faults make the lease library
// warn every few seconds ("lock renewal failed" for every failed renew), and those lines would
// bury the status line. It passes the first warning of each kind (same message), marked so the
// reader knows more are coming, and counts the repeats instead; the status line shows the count.
// Errors, and anything below warning level that the user asked for with --log.level, pass.
type repeatCounter struct {
	inner slog.Handler
	state *repeatState
}

type repeatState struct {
	mu         sync.Mutex
	seen       map[string]bool
	suppressed atomic.Int64
}

func newRepeatCounter(inner slog.Handler) *repeatCounter {
	return &repeatCounter{inner: inner, state: &repeatState{seen: map[string]bool{}}}
}

func (h *repeatCounter) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *repeatCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level != slog.LevelWarn {
		return h.inner.Handle(ctx, r)
	}
	h.state.mu.Lock()
	first := !h.state.seen[r.Message]
	h.state.seen[r.Message] = true
	h.state.mu.Unlock()
	if !first {
		h.state.suppressed.Add(1)
		return nil
	}
	r = r.Clone()
	r.AddAttrs(slog.String("demo_note", "repeats of this warning are counted in the status line"))
	return h.inner.Handle(ctx, r)
}

func (h *repeatCounter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &repeatCounter{inner: h.inner.WithAttrs(attrs), state: h.state}
}

func (h *repeatCounter) WithGroup(name string) slog.Handler {
	return &repeatCounter{inner: h.inner.WithGroup(name), state: h.state}
}

// repeats is how many warnings were counted instead of printed.
func (h *repeatCounter) repeats() int64 { return h.state.suppressed.Load() }
