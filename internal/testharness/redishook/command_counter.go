package redishook

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// CommandCounter is a go-redis hook counting the commands a client sends by name (lower case,
// and, for CLUSTER and COMMAND, the subcommand: "cluster slots"), pipelined ones included. Its methods are safe for
// concurrent use.
type CommandCounter struct {
	PassThrough
	mu     sync.Mutex
	counts map[string]int
}

// NewCommandCounter is a CommandCounter that has counted nothing.
func NewCommandCounter() *CommandCounter { return &CommandCounter{counts: map[string]int{}} }

// Count is how many commands named name were sent so far.
func (h *CommandCounter) Count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[name]
}

func (h *CommandCounter) add(cmds ...redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		h.counts[strings.ToLower(c.FullName())]++
	}
}

// ProcessHook counts cmd.
func (h *CommandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.add(cmd)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts each of cmds.
func (h *CommandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.add(cmds...)
		return next(ctx, cmds)
	}
}
