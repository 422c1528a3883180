package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	lockcompanions "github.com/lockwatch/lockwatch/internal/companions"
)

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

// readCompanions reads the fence and the holder (internal/lockkeys) of each key in one pipeline,
// through the reader the exporter's scan uses, so both bound a value the same way. The
// documented ACL grants GET on exactly those key shapes.
func readCompanions(ctx context.Context, client redis.UniversalClient, keys []collectors.KeyInfo) companions {
	c := companions{fences: make([]string, len(keys)), fenceNums: make([]*int64, len(keys)),
		holders: make([]*string, len(keys)), holderLost: make([]bool, len(keys))}
	if len(keys) == 0 {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, companionTimeout)
	defer cancel()
	lockKeys := make([]string, len(keys))
	for i, k := range keys {
		lockKeys[i] = k.Key
	}
	for i, v := range lockcompanions.Read(ctx, client, lockKeys, true) {
		c.fences[i] = fenceText(v, &c.fenceErr)
		if n, err := strconv.ParseInt(c.fences[i], 10, 64); err == nil {
			c.fenceNums[i] = &n
		}
		if v.HasHolder {
			c.holders[i] = &v.Holder
		}
		c.holderLost[i] = v.HolderErr != nil
		if v.HolderErr != nil && c.holderErr == nil {
			c.holderErr = v.HolderErr
		}
	}
	return c
}

// fenceText is the FENCE column: the counter, "-" without a fence key, "?" when unreadable.
func fenceText(v lockcompanions.Values, firstErr *error) string {
	switch {
	case v.FenceErr != nil:
		if *firstErr == nil {
			*firstErr = v.FenceErr
		}
		return "?"
	case !v.HasFence:
		return "-"
	}
	// A fence counter is an integer; anything else is not ours to print.
	if _, perr := strconv.ParseInt(v.Fence, 10, 64); perr != nil {
		return "(not a counter)"
	}
	return v.Fence
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
