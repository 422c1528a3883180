package wire

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// queuedCmd is a caller's command waiting to go out in a shared pipeline (see batcher).
type queuedCmd struct {
	ctx context.Context
	cmd redis.Cmder
	src string // the script's source when cmd is an EVALSHA, for the NOSCRIPT fallback
}

// execPipeline runs the commands of live as one pipeline on pipe (empty, and empty again on
// return: go-redis's Exec drops the commands it sent) and then, if Redis had lost a script (a
// restart, SCRIPT FLUSH, a failover to a fresh replica), runs those scripts again by source.
// redis.Script.Run does the same for a single command; a pipeline leaves it to the caller.
func execPipeline(ctx context.Context, rdb redis.UniversalClient, pipe redis.Pipeliner, live []*waiter) {
	for _, q := range live {
		_ = pipe.Process(ctx, q.cmd)
	}
	// Each command carries its own error; Exec's is the first of them.
	_, _ = pipe.Exec(ctx)

	var retry []*waiter
	for _, q := range live {
		if q.src != "" && q.cmd.Err() != nil && redis.HasErrorPrefix(q.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, q)
		}
	}
	if len(retry) == 0 {
		return
	}
	pipe = rdb.Pipeline()
	evals := make([]*redis.Cmd, len(retry))
	for i, q := range retry {
		evals[i] = evalBySource(q.ctx, q.src, q.cmd)
		_ = pipe.Process(ctx, evals[i])
	}
	_, _ = pipe.Exec(ctx)
	for i, q := range retry {
		cmd := q.cmd.(*redis.Cmd)
		cmd.SetVal(evals[i].Val())
		cmd.SetErr(evals[i].Err())
	}
}
