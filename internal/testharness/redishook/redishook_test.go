package redishook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// pipelineCounter overrides only the pipeline hook, counting the test's INCR pipelines (not
// go-redis's connection handshake); single commands and dials must pass through the embedded
// PassThrough to the real server.
type pipelineCounter struct {
	PassThrough
	pipelines atomic.Int64
}

func (h *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() == "incr" {
			h.pipelines.Add(1)
		}
		return next(ctx, cmds)
	}
}

func TestPassThroughReachesTheServer(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client(t)
	h := &pipelineCounter{}
	c.AddHook(h)
	if err := c.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := srv.Do(ctx, "GET", "k"); err != nil || got != "v" {
		t.Fatalf("the server holds %v (%v) after SET through the hook, want v", got, err)
	}
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := srv.Do(ctx, "GET", "n"); err != nil || got != "2" {
		t.Errorf("n = %v (%v) after a pipeline through the hook, want 2", got, err)
	}
	if n := h.pipelines.Load(); n != 1 {
		t.Errorf("the overriding ProcessPipelineHook saw %d INCR pipelines, want 1", n)
	}
}

func TestAnswerLocallyNeverDials(t *testing.T) {
	// Nothing listens on port 1: any command that reached the network would fail.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	c.AddHook(AnswerLocally{})
	ctx := context.Background()
	if ok, err := c.SetNX(ctx, "k", "v", time.Second).Result(); err != nil || !ok {
		t.Errorf("SET NX = %v, %v; want true, nil", ok, err)
	}
	if s, err := c.Set(ctx, "k", "v", 0).Result(); err != nil || s != "OK" {
		t.Errorf("SET = %q, %v; want OK, nil", s, err)
	}
	if n, err := c.Eval(ctx, "return 1", []string{"k"}).Int64(); err != nil || n != 1 {
		t.Errorf("EVAL = %d, %v; want 1, nil", n, err)
	}
}
