// Package companions reads the values of the companion keys the lease library writes beside a
// lock key: its holder record ({L}:holder) and its fence counter ({L}:fence). It never reads
// the lock key itself: a lock's value is its owner's token.
//
// The exporter's scan reads holders only; lock-exporter inspect asks for fences too. Both read
// through Read, so a value is bounded the same way wherever it is shown.
package companions

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// MaxValueBytes bounds how much of a companion's value is kept. lease writes at most 256 bytes
// of holder description and a decimal counter; a key of the same shape written by something
// else could hold anything.
const MaxValueBytes = 1024

// Values are what Read found for one lock key.
type Values struct {
	// Holder is the description in the lock's holder record (the acquisition time recorded after
	// it is not part of it), cut to MaxValueBytes. Valid only when HasHolder.
	Holder    string
	HasHolder bool
	// HolderErr is the error of a holder GET that failed (nil when the key does not exist).
	HolderErr error
	// Fence is the fence key's value, cut to MaxValueBytes; read only when asked. Valid only
	// when HasFence.
	Fence    string
	HasFence bool
	// FenceErr is the error of a fence GET that failed (nil when the key does not exist).
	FenceErr error
}

// Read GETs the holder key of each of lockKeys, and its fence key when withFences, in one
// pipeline (a cluster client routes each command by slot). Each reply is judged on its own: a
// missing key leaves its Has flag false, a failed GET sets its error.
func Read(ctx context.Context, c redis.Cmdable, lockKeys []string, withFences bool) []Values {
	out := make([]Values, len(lockKeys))
	if len(lockKeys) == 0 {
		return out
	}
	pipe := c.Pipeline()
	holders := make([]*redis.StringCmd, len(lockKeys))
	fences := make([]*redis.StringCmd, len(lockKeys))
	for i, k := range lockKeys {
		holders[i] = pipe.Get(ctx, lockkeys.Holder(k))
		if withFences {
			fences[i] = pipe.Get(ctx, lockkeys.Fence(k))
		}
	}
	_, _ = pipe.Exec(ctx) // each reply is judged on its own below
	for i := range out {
		v := &out[i]
		var record string
		record, v.HasHolder, v.HolderErr = value(holders[i])
		if v.HasHolder {
			v.Holder = bounded(lockkeys.ParseHolder(record).Description)
		}
		if withFences {
			v.Fence, v.HasFence, v.FenceErr = value(fences[i])
			v.Fence = bounded(v.Fence)
		}
	}
	return out
}

// value is cmd's reply, whether the key exists, and the GET's error.
func value(cmd *redis.StringCmd) (string, bool, error) {
	v, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return v, true, nil
}

func bounded(v string) string {
	if len(v) > MaxValueBytes {
		return v[:MaxValueBytes]
	}
	return v
}
