package observe

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/observe/internal/multiblock"
)

// Hook returns the go-redis v9 hook that feeds the Observer: add it to the client that
// bsm/redislock or redsync's goredis pool uses (rdb.AddHook(obs.Hook())). Commands that are not
// lock commands on a declared namespace pass through untouched.
// Each hook is told apart from the others, so that a lock written through several clients
// (redsync's servers) is one lock with a part per server: a hook stands for one Redis server,
// and clients of the same server should share one hook.
func (o *Observer) Hook() redis.Hook { return goRedisHook{o, o.hooks.Add(1)} }

type goRedisHook struct {
	o      *Observer
	server uint32
}

func (goRedisHook) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

// ProcessHook is called once per hook chain: for the client when the hook is added, and again
// for every Conn and Tx go-redis makes from it, so that tx below is one connection's when the
// chain is a Conn's (see goredis_conn.go).
func (h goRedisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	tx := new(connTx)
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Err() != nil {
			// Handed over with its context already done: the client fails it without
			// sending it, so it is not an operation on the lock.
			return next(ctx, cmd)
		}
		if b := tx.block.Load(); b != nil {
			return h.inBlock(ctx, cmd, next, tx, b)
		}
		// The Call lives on this stack: no pool round trip (and no pointer writes to a heap
		// object) per lock command.
		var call Call
		args := cmd.Args()
		c := beginGoRedis(h.o, args, &call)
		if c == nil {
			if isMulti(args) {
				return h.multi(ctx, cmd, next, tx)
			}
			return next(ctx, cmd)
		}
		c.server = h.server
		err := next(ctx, cmd)
		c.finish(goRedisReply(cmd, err))
		return err
	}
}

func (h goRedisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Err() != nil {
			return next(ctx, cmds)
		}
		var calls []*Call
		for i, cmd := range cmds {
			if c := begin(h.o, goRedisArgs(cmd.Args()), nil); c != nil {
				c.server = h.server
				if calls == nil {
					calls = make([]*Call, len(cmds))
				}
				calls[i] = c
			}
		}
		err := next(ctx, cmds)
		var queued []multiblock.Slot
		if calls != nil {
			queued = queuedIn(cmds)
		}
		for i, c := range calls {
			if c == nil {
				continue
			}
			if errors.Is(cmds[i].Err(), redis.TxFailedErr) {
				// A transaction a WATCHed key's change aborted: its commands did nothing.
				c.recycle()
				continue
			}
			if queued != nil && queued[i].Exec != 0 {
				if r, ok := execElement(cmds, queued[i]); ok {
					c.Done(r)
				} else {
					c.recycle()
				}
				continue
			}
			// In a pipeline, next's error may be another command's: each command's own
			// error is the one that counts (go-redis sets it on every command of a failed
			// connection).
			c.Done(goRedisReply(cmds[i], nil))
		}
		return err
	}
}

// beginGoRedis is begin for go-redis' arguments. It is not inlined: this closure may be
// inlined into another package (one that calls Hook().ProcessHook itself), where a call to
// the generic begin carries no escape facts and would move the hook's Call to the heap; a
// plain function's facts travel with it.
//
//go:noinline
func beginGoRedis(o *Observer, args []any, into *Call) *Call {
	return begin(o, goRedisArgs(args), into)
}

// goRedisArgs reads go-redis' []any arguments as strings.
type goRedisArgs []any

func (a goRedisArgs) Len() int { return len(a) }

func (a goRedisArgs) Arg(i int) string {
	switch v := a[i].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(a[i])
}

// intArg implements argReader: go-redis keeps integer arguments (EVAL's key count, SET's PX
// milliseconds) as Go integers, read here as they are.
func (a goRedisArgs) intArg(i int) (int64, bool) {
	switch v := a[i].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	}
	return parseInt(a.Arg(i))
}

// goRedisReply reads a command's reply. SET NX through SetNX is a BoolCmd whose nil reply is
// false without an error; scripts are Cmds whose nil reply is redis.Nil. A transport error
// (timeout, closed connection) is what the hook chain returned: go-redis sets it on the
// command only after the hooks have run.
func goRedisReply(cmd redis.Cmder, processErr error) Reply {
	err := cmd.Err()
	if err == nil {
		err = processErr
	}
	if errors.Is(err, redis.Nil) {
		return Reply{Nil: true}
	}
	if err != nil {
		return Reply{Err: err}
	}
	switch c := cmd.(type) {
	case *redis.BoolCmd:
		return Reply{Nil: !c.Val()}
	case *redis.IntCmd:
		return Reply{Int: c.Val(), IsInt: true}
	case *redis.Cmd:
		switch v := c.Val().(type) {
		case nil:
			return Reply{Nil: true}
		case int64:
			return Reply{Int: v, IsInt: true}
		case string:
			if v == "QUEUED" {
				// Queued in a MULTI block this hook does not follow (one sent through a
				// pooled client, whose commands go to any of its connections): no outcome.
				return Reply{Err: errQueued}
			}
		}
	}
	return Reply{}
}

// queuedIn finds the commands of cmds queued in a MULTI block sent by hand through a plain
// pipeline (pipe.Do(ctx, "multi") … pipe.Do(ctx, "exec")): go-redis gives each its QUEUED
// answer, and its outcome is its element of EXEC's reply. A TxPipeline needs none of this:
// go-redis wraps it in MULTI (a StatusCmd) and EXEC (a SliceCmd) itself and sets each command's
// reply from EXEC's, so only a MULTI sent as a Cmd opens a block.
func queuedIn(cmds []redis.Cmder) []multiblock.Slot {
	return multiblock.Find(len(cmds), func(i int) multiblock.Kind {
		switch cmds[i].Name() {
		case "multi":
			if _, byHand := cmds[i].(*redis.Cmd); byHand {
				return multiblock.Multi
			}
		case "exec":
			return multiblock.Exec
		case "discard":
			return multiblock.Discard
		}
		return multiblock.Other
	})
}

// execElement is the outcome of the command queued at s: its element of EXEC's reply, or
// EXEC's error. ok is false when the block did not run (EXEC answered nil: a WATCHed key
// changed; DISCARD; no EXEC in this pipeline).
func execElement(cmds []redis.Cmder, s multiblock.Slot) (Reply, bool) {
	if s.Exec < 0 {
		return Reply{}, false
	}
	execCmd, ok := cmds[s.Exec].(*redis.Cmd)
	if !ok {
		return Reply{}, false
	}
	vals, err := execCmd.Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return Reply{}, false
	case err != nil:
		return Reply{Err: err}, true
	}
	if s.Pos >= len(vals) {
		return Reply{}, false
	}
	return execValue(vals[s.Pos]), true
}

// execValue reads one element of EXEC's reply as a command's reply.
func execValue(v any) Reply {
	switch v := v.(type) {
	case nil:
		return Reply{Nil: true}
	case int64:
		return Reply{Int: v, IsInt: true}
	case error:
		return Reply{Err: v}
	}
	return Reply{}
}
