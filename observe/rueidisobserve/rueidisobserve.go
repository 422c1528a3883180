// Package rueidisobserve feeds an observe.Observer from a rueidis client, the client
// rueidislock locks through. It is its own module so that rueidis enters no one's dependency
// graph through lockwatch unless they import this package.
//
// Hook has the method set of rueidishook.Hook, so a client already wrapped by rueidishook
// takes it as is:
//
//	client = rueidishook.WithHook(client, rueidisobserve.NewHook(obs))
//
// WithObserver wraps a client the same way without rueidishook, and ClientBuilder plugs that
// into rueidislock.LockerOption.ClientBuilder:
//
//	locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
//		ClientOption:  rueidis.ClientOption{InitAddress: []string{addr}},
//		ClientBuilder: rueidisobserve.ClientBuilder(obs),
//	})
package rueidisobserve

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockwatch/lockwatch/observe"
	"github.com/lockwatch/lockwatch/observe/internal/multiblock"
)

// Hook observes the commands of a rueidis client. Do and DoMulti are where lock commands
// pass (rueidis.Lua.Exec sends EVALSHA, then EVAL on NOSCRIPT, through Do); the cached,
// streaming and pub/sub paths carry no lock commands and pass through untouched.
type Hook struct{ obs *observe.Observer }

// NewHook returns the hook for obs.
func NewHook(obs *observe.Observer) Hook { return Hook{obs} }

// Do implements rueidishook.Hook.
func (h Hook) Do(client rueidis.Client, ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if ctx.Err() != nil {
		// Handed over with its context already done (rueidislock sends its release under the
		// lock's own deadline, passed once the key expired): rueidis fails it without sending
		// it, so it is not an operation on the lock.
		return client.Do(ctx, cmd)
	}
	// The Call lives on this stack: no pool round trip per lock command.
	var call observe.Call
	c := h.obs.BeginStringsOn(&call, cmd.Commands())
	resp := client.Do(ctx, cmd)
	c.Finish(reply(resp))
	return resp
}

// DoMulti implements rueidishook.Hook.
func (h Hook) DoMulti(client rueidis.Client, ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if ctx.Err() != nil {
		return client.DoMulti(ctx, multi...)
	}
	var calls []*observe.Call
	for i, cmd := range multi {
		if c := h.obs.BeginStrings(cmd.Commands()); c != nil {
			if calls == nil {
				calls = make([]*observe.Call, len(multi))
			}
			calls[i] = c
		}
	}
	var tx []multiblock.Slot
	if calls != nil {
		// Read before sending: rueidis recycles the commands once they are sent.
		tx = transactions(multi)
	}
	resps := client.DoMulti(ctx, multi...)
	for i, c := range calls {
		if c == nil || i >= len(resps) {
			continue
		}
		if tx != nil && tx[i].Exec != 0 {
			if r, ok := queuedReply(resps, tx[i]); ok {
				c.Done(r)
			}
			continue
		}
		c.Done(reply(resps[i]))
	}
	return resps
}

// transactions finds the MULTI blocks of multi; nil when there is none.
func transactions(multi []rueidis.Completed) []multiblock.Slot {
	return multiblock.Find(len(multi), func(i int) multiblock.Kind {
		switch name := multi[i].Commands()[0]; {
		case strings.EqualFold(name, "multi"):
			return multiblock.Multi
		case strings.EqualFold(name, "exec"):
			return multiblock.Exec
		case strings.EqualFold(name, "discard"):
			return multiblock.Discard
		}
		return multiblock.Other
	})
}

// queuedReply is the outcome of a command queued in a transaction: its element of EXEC's
// reply, or EXEC's error (EXECABORT, a lost connection). ok is false when the transaction was
// not run (a WATCHed key changed: EXEC answered nil; DISCARD) or not ended in this DoMulti.
func queuedReply(resps []rueidis.RedisResult, s multiblock.Slot) (observe.Reply, bool) {
	if s.Exec < 0 || s.Exec >= len(resps) {
		return observe.Reply{}, false
	}
	msg, err := resps[s.Exec].ToMessage()
	switch {
	case rueidis.IsRedisNil(err):
		return observe.Reply{}, false
	case err != nil:
		return observe.Reply{Err: err}, true
	}
	elems, err := msg.ToArray()
	if err != nil || s.Pos >= len(elems) {
		return observe.Reply{Err: err}, err != nil
	}
	return messageReply(elems[s.Pos]), true
}

// DoCache implements rueidishook.Hook; cached reads are not lock operations.
func (Hook) DoCache(client rueidis.Client, ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	return client.DoCache(ctx, cmd, ttl)
}

// DoMultiCache implements rueidishook.Hook; cached reads are not lock operations.
func (Hook) DoMultiCache(client rueidis.Client, ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	return client.DoMultiCache(ctx, multi...)
}

// Receive implements rueidishook.Hook; subscriptions are not lock operations.
func (Hook) Receive(client rueidis.Client, ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error {
	return client.Receive(ctx, subscribe, fn)
}

// DoStream implements rueidishook.Hook; streamed replies are not lock operations.
func (Hook) DoStream(client rueidis.Client, ctx context.Context, cmd rueidis.Completed) rueidis.RedisResultStream {
	return client.DoStream(ctx, cmd)
}

// DoMultiStream implements rueidishook.Hook; streamed replies are not lock operations.
func (Hook) DoMultiStream(client rueidis.Client, ctx context.Context, multi ...rueidis.Completed) rueidis.MultiRedisResultStream {
	return client.DoMultiStream(ctx, multi...)
}

// reply reads a rueidis result; a nil reply (SET NX on a taken key, a script's false) is
// rueidis' Nil error. An integer reply, or a string that reads as one, is an integer; a
// string that cannot (OK) is not parsed, which would cost an error's allocations on every
// acquire.
func reply(resp rueidis.RedisResult) observe.Reply {
	msg, err := resp.ToMessage()
	return messageReplyErr(msg, err)
}

// messageReply reads one reply message (an element of EXEC's reply, say) as reply does.
func messageReply(msg rueidis.RedisMessage) observe.Reply {
	return messageReplyErr(msg, msg.Error())
}

func messageReplyErr(msg rueidis.RedisMessage, err error) observe.Reply {
	if rueidis.IsRedisNil(err) {
		return observe.Reply{Nil: true}
	}
	if err != nil {
		return observe.Reply{Err: err}
	}
	if msg.IsInt64() {
		n, _ := msg.AsInt64()
		return observe.Reply{Int: n, IsInt: true}
	}
	if s, err := msg.ToString(); err == nil && mayBeInt(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return observe.Reply{Int: n, IsInt: true}
		}
	}
	return observe.Reply{}
}

// mayBeInt reports whether s starts as strconv.ParseInt's base-10 input must.
func mayBeInt(s string) bool {
	return s != "" && (s[0] == '-' || s[0] == '+' || '0' <= s[0] && s[0] <= '9')
}
