package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// maxHolderBytes bounds how much of a holder key's value inspect keeps. lease writes at most 256
// bytes; a key of that shape written by something else could hold anything.
const maxHolderBytes = 1024

// companions are the fence value and the holder of each listed key, read from the lease
// library's companion keys, never from the lock key itself: lock values are owner tokens.
type companions struct {
	fences     []string  // the fence counter, "-" without one, "?" when unreadable
	fenceNums  []*int64  // the fence counter as a number, nil without one or when unreadable
	holders    []*string // the holder, nil without one (another library's lock) or when unreadable
	holderLost []bool    // the holder GET failed: HOLDER shows "?"
	fenceErr   error     // the first failed fence GET
	holderErr  error     // the first failed holder GET
}

// readCompanions GETs the fence key and the holder key (internal/lockkeys) of each key in one pipeline. The
// documented ACL grants GET on exactly those key shapes.
func readCompanions(ctx context.Context, client redis.UniversalClient, keys []collectors.KeyInfo) companions {
	c := companions{fences: make([]string, len(keys)), fenceNums: make([]*int64, len(keys)),
		holders: make([]*string, len(keys)), holderLost: make([]bool, len(keys))}
	if len(keys) == 0 {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, companionTimeout)
	defer cancel()
	pipe := client.Pipeline()
	fences := make([]*redis.StringCmd, len(keys))
	holders := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		fences[i] = pipe.Get(ctx, lockkeys.Fence(k.Key))
		holders[i] = pipe.Get(ctx, lockkeys.Holder(k.Key))
	}
	_, _ = pipe.Exec(ctx) // each reply is judged on its own below
	for i := range keys {
		c.fences[i] = fenceValue(fences[i], &c.fenceErr)
		if n, err := strconv.ParseInt(c.fences[i], 10, 64); err == nil {
			c.fenceNums[i] = &n
		}
		c.holders[i] = holderValue(holders[i], &c.holderErr)
		c.holderLost[i] = holders[i].Err() != nil && !errors.Is(holders[i].Err(), redis.Nil)
	}
	return c
}

func fenceValue(cmd *redis.StringCmd, firstErr *error) string {
	v, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "-"
	case err != nil:
		if *firstErr == nil {
			*firstErr = err
		}
		return "?"
	}
	// A fence counter is an integer; anything else is not ours to print.
	if _, perr := strconv.ParseInt(v, 10, 64); perr != nil {
		return "(not a counter)"
	}
	return v
}

func holderValue(cmd *redis.StringCmd, firstErr *error) *string {
	v, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil
	case err != nil:
		if *firstErr == nil {
			*firstErr = err
		}
		return nil
	}
	// The description: the acquisition time lease records after it is not for the holder column.
	if v = lockkeys.ParseHolder(v).Description; len(v) > maxHolderBytes {
		v = v[:maxHolderBytes]
	}
	return &v
}

// redisAnswers returns nil when Redis can be reached and accepted the credentials before
// deadline, so that a scan that failed says FAILED or PARTIAL about the namespace (exit 3) rather
// than "cannot read Redis" (exit 1); otherwise the PING's error. A PING after the scan tells: a
// reply, or an error reply other than an authentication failure (NOPERM from an ACL without +ping
// is still Redis answering an authenticated user). A scan whose deadline passed before the first
// reply cannot tell a slow start from an unreachable server either; the PING can.
func redisAnswers(ctx context.Context, client redis.UniversalClient, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := client.Ping(ctx).Err()
	var reply redis.Error
	if err == nil || errors.As(err, &reply) && !authFailure(err) {
		return nil
	}
	return err
}

// authFailure reports whether err is Redis refusing the connection's credentials.
func authFailure(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"WRONGPASS", "NOAUTH", "ERR AUTH", "ERR invalid password", "ERR invalid username"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
