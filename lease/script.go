package lease

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// script is a Lua script of the library: its source, for EVAL, and its SHA1, for EVALSHA. The
// SHA1 is kept boxed as a command argument, so that a call does not box it again. Each script is
// a package-level value beside the operation that runs it; it is never modified.
type script struct {
	src string
	sha any
}

func newScript(src string) script { return script{src: src, sha: redis.NewScript(src).Hash()} }

// evalSha is the EVALSHA command of s on its first numKeys keysAndArgs as keys and the rest as
// arguments.
func (s script) evalSha(ctx context.Context, numKeys int, keysAndArgs []any) *redis.Cmd {
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

// runScript runs s with its first numKeys keysAndArgs as keys and the rest as arguments, on its
// own or in a pipeline; every lease script returns an integer. It builds the EVALSHA
// itself rather than calling go-redis's Script.Run, which costs a few more allocations per call,
// and falls back to EVAL as Script.Run does.
func (c *Client) runScript(ctx context.Context, s script, numKeys int, keysAndArgs ...any) (int64, error) {
	cmd := s.evalSha(ctx, numKeys, keysAndArgs)
	if err := c.do(ctx, cmd, s.src); err != nil {
		return 0, err
	}
	return cmd.Int64()
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
