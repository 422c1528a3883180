package observe

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/observe/internal/multiblock"
)

// A MULTI … EXEC block sent as separate calls on one connection (rdb.Conn(), or the Tx of
// rdb.Watch): conn.Do(ctx, "multi"), then each command, then conn.Do(ctx, "exec"). The server
// answers each queued command QUEUED (go-redis reads it as false for SetNX, as a success for a
// Do), and its outcome is its element of EXEC's reply.
//
// go-redis builds a Conn's (and a Tx's) hook chain anew from the client's hooks when it makes
// the Conn, so the closure ProcessHook returns is that connection's alone, and what it keeps
// (connTx) goes with the Conn. The same closure type serves a pooled Client, whose commands go
// to any of its connections from any goroutine: a block is followed only when the MULTI was
// sent through a Conn or a Tx (sentOnOneConnection), and outside a block a command costs one
// atomic load more than before.

// maxQueuedInBlock bounds the lock commands a block keeps for EXEC's reply; the ones past it
// pass uncounted (their places in the reply are still counted, so the first ones read right).
const maxQueuedInBlock = 64

// connTx is what one hook chain keeps of MULTI blocks.
type connTx struct {
	block atomic.Pointer[txBlock] // the open block; nil outside one
	// one is whether the chain is one connection's (oneUnknown until a MULTI asks).
	one atomic.Uint32
}

const (
	oneUnknown uint32 = iota
	oneConnection
	notOneConnection
)

// txBlock is an open block: how many commands the server queued, and the lock commands among
// them with their places. A Conn is used from one goroutine at a time; the lock makes a Conn
// shared against go-redis' rules a wrong count, not a data race.
type txBlock struct {
	mu     sync.Mutex
	n      int // commands queued: EXEC's reply has one element each
	calls  []queuedCall
	closed bool
}

type queuedCall struct {
	c   *Call
	pos int
}

// followsBlocks reports whether MULTI blocks sent through this chain are followed: whether the
// chain is a go-redis Conn's or Tx's. The answer is kept: a chain is one or the other for life.
func (t *connTx) followsBlocks() bool {
	switch t.one.Load() {
	case oneConnection:
		return true
	case notOneConnection:
		return false
	}
	one := sentOnOneConnection()
	if one {
		t.one.Store(oneConnection)
	} else {
		t.one.Store(notOneConnection)
	}
	return one
}

// goRedisPkg is go-redis' package path, as the runtime names its functions.
var goRedisPkg = reflect.TypeFor[redis.Conn]().PkgPath()

// sentOnOneConnection reports whether the command the calling hook handles was sent through a
// go-redis Conn or Tx: whether the first go-redis Process method above the hook on the stack
// (the one that runs the chain; other hooks' closures may stand between) is (*Conn).Process or
// (*Tx).Process rather than a pooled client's. It walks the stack, so it runs once per chain,
// at its first MULTI. If a go-redis release renamed these methods, blocks would no longer be
// followed (the tests on a real server would fail), never followed on a pooled client.
func sentOnOneConnection() bool {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if pkg, method, ok := strings.Cut(f.Function, ".("); ok && pkg == goRedisPkg && strings.HasSuffix(method, ").Process") {
			return method == "*Conn).Process" || method == "*Tx).Process"
		}
		if !more {
			return false
		}
	}
}

// isMulti reports whether go-redis' arguments are a MULTI.
func isMulti(args []any) bool {
	if len(args) != 1 {
		return false
	}
	name, ok := args[0].(string)
	return ok && len(name) == 5 && strings.EqualFold(name, "multi")
}

// blockEnd names the commands that end a block: EXEC runs it, DISCARD drops it, and RESET
// drops it with the rest of the connection's state.
func blockEnd(args []any) multiblock.Kind {
	if len(args) != 1 {
		return multiblock.Other
	}
	name, _ := args[0].(string)
	switch {
	case strings.EqualFold(name, "exec"):
		return multiblock.Exec
	case strings.EqualFold(name, "discard"), strings.EqualFold(name, "reset"):
		return multiblock.Discard
	}
	return multiblock.Other
}

// multi sends a MULTI that is no lock command and, when the server opened a block on a chain
// of one connection, starts following it.
func (h goRedisHook) multi(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook, t *connTx) error {
	err := next(ctx, cmd)
	if err == nil && cmd.Err() == nil && t.followsBlocks() {
		t.block.Store(new(txBlock))
	}
	return err
}

// inBlock sends a command inside the open block b: a lock command is kept for EXEC's reply
// when the server queued it; EXEC, DISCARD and RESET end the block.
func (h goRedisHook) inBlock(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook, t *connTx, b *txBlock) error {
	args := cmd.Args()
	switch blockEnd(args) {
	case multiblock.Exec:
		err := next(ctx, cmd)
		b.exec(t, cmd, err)
		return err
	case multiblock.Discard:
		err := next(ctx, cmd)
		b.drop(t)
		return err
	}
	c := begin(h.o, goRedisArgs(args), nil)
	if c != nil {
		c.server = h.server
	}
	err := next(ctx, cmd)
	replyErr := cmd.Err()
	if replyErr == nil {
		replyErr = err
	}
	var refused redis.Error
	switch {
	case replyErr == nil:
		b.queue(c)
	case errors.As(replyErr, &refused):
		// Refused when queued (an argument error, OOM, a nested MULTI): it takes no place in
		// the block, and its error is its outcome (EXEC will refuse the block: EXECABORT).
		c.Done(goRedisReply(cmd, err))
	default:
		// Failed in transit, or its reply could not be read (QUEUED is no IntCmd's integer):
		// go-redis drops the connection, and the server the block with it. Nothing ran.
		if c != nil {
			c.recycle()
		}
		b.drop(t)
	}
	return err
}

// queue keeps c (nil for a command that is no lock command) at the block's next place.
func (b *txBlock) queue(c *Call) {
	b.mu.Lock()
	keep := c != nil && !b.closed && len(b.calls) < maxQueuedInBlock
	if keep {
		b.calls = append(b.calls, queuedCall{c, b.n})
	}
	b.n++
	b.mu.Unlock()
	if c != nil && !keep {
		c.recycle()
	}
}

// end closes the block and returns its kept commands and its size; the chain follows no block
// after it.
func (b *txBlock) end(t *connTx) ([]queuedCall, int) {
	t.block.CompareAndSwap(b, nil)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0
	}
	b.closed = true
	calls := b.calls
	b.calls = nil
	return calls, b.n
}

// drop ends a block that did not run: its commands count nothing.
func (b *txBlock) drop(t *connTx) {
	calls, _ := b.end(t)
	for _, q := range calls {
		q.c.recycle()
	}
}

// exec ends the block with EXEC's reply: each kept command counts its element, or EXEC's error
// (EXECABORT, or EXEC failed in transit), as a hand-made block in a pipeline does. Nothing is
// counted when the block did not run (nil: a WATCHed key changed), or when the reply's length
// is not the number of commands this chain saw queued (some were queued another way, through
// a pipeline of the same connection, say): then no element can be placed.
func (b *txBlock) exec(t *connTx, cmd redis.Cmder, processErr error) {
	calls, n := b.end(t)
	vals, err := execReply(cmd, processErr)
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		for _, q := range calls {
			q.c.Done(Reply{Err: err})
		}
		return
	case len(vals) == n:
		for _, q := range calls {
			q.c.Done(execValue(vals[q.pos]))
		}
		return
	}
	for _, q := range calls {
		q.c.recycle()
	}
}

// execReply reads EXEC's reply, sent as a Do (a Cmd) or a SliceCmd; nil values for another
// type, which then place nothing.
func execReply(cmd redis.Cmder, processErr error) ([]any, error) {
	err := cmd.Err()
	if err == nil {
		err = processErr
	}
	if err != nil {
		return nil, err
	}
	switch c := cmd.(type) {
	case *redis.Cmd:
		vals, _ := c.Val().([]any)
		return vals, nil
	case *redis.SliceCmd:
		return c.Val(), nil
	}
	return nil, nil
}
