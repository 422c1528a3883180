package redishook

import (
	"context"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestCommandCounterCountsSingleAndPipelined(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	counter := NewCommandCounter()
	c.AddHook(counter)
	c.Set(ctx, "k", "v", time.Minute)
	pipe := c.Pipeline()
	pipe.Get(ctx, "k")
	pipe.Get(ctx, "k")
	pipe.PTTL(ctx, "k")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "COMMAND", "COUNT")
	for name, want := range map[string]int{"set": 1, "get": 2, "pttl": 1, "command count": 1, "del": 0} {
		if got := counter.Count(name); got != want {
			t.Errorf("%d %q commands counted, want %d", got, name, want)
		}
	}
}
