package wire

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Script is a Lua script of the library: its source, for EVAL, and its SHA1, for EVALSHA. The
// SHA1 is kept boxed as a command argument, so that a call does not box it again. Each script is
// a package-level value beside the operation that runs it; it is never modified.
type Script struct {
	src string
	sha any
}

// NewScript is the script with source src.
func NewScript(src string) Script { return Script{src: src, sha: redis.NewScript(src).Hash()} }

// Source is the script's Lua source.
func (s Script) Source() string { return s.src }

// evalSha is the EVALSHA command of s on its first numKeys keysAndArgs as keys and the rest as
// arguments.
func (s Script) evalSha(ctx context.Context, numKeys int, keysAndArgs []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keysAndArgs))
	cmdArgs = append(cmdArgs, "evalsha", s.sha, numKeys)
	cmdArgs = append(cmdArgs, keysAndArgs...)
	return redis.NewCmd(ctx, cmdArgs...)
}

// evalBySource turns an EVALSHA of the script with source src into the same call as EVAL, for
// a Redis that lost the script (a restart, SCRIPT FLUSH, a failover to a fresh replica); EVAL
// also loads it again.
func evalBySource(ctx context.Context, src string, evalSha redis.Cmder) *redis.Cmd {
	// EVALSHA sha numkeys keys… args… → EVAL src numkeys keys… args…
	return redis.NewCmd(ctx, append([]any{"eval", src}, evalSha.Args()[2:]...)...)
}

// processWithFallback runs cmd on its own and, when it is the EVALSHA of a script Redis lost
// (src non-empty), runs it again by source, as go-redis's Script.Run does.
func processWithFallback(ctx context.Context, rdb redis.UniversalClient, cmd redis.Cmder, src string) {
	_ = rdb.Process(ctx, cmd)
	// The nil check first: HasErrorPrefix allocates on every call.
	if src == "" || cmd.Err() == nil || !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return
	}
	eval := evalBySource(ctx, src, cmd)
	_ = rdb.Process(ctx, eval)
	c := cmd.(*redis.Cmd)
	c.SetVal(eval.Val())
	c.SetErr(eval.Err())
}
