package main

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// answerLocally is a go-redis hook that answers every command in-process as a free lock would
// (SET NX → true, scripts → 1) and never reaches the network. With it, a variant's cycle is
// pure client-side work, so a difference of a few hundred nanoseconds (the metrics' cost) is
// measurable on a machine whose round trips vary by tens of microseconds.
type answerLocally struct{}

func (answerLocally) DialHook(next redis.DialHook) redis.DialHook { return next }

func (answerLocally) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		switch c := cmd.(type) {
		case *redis.BoolCmd:
			c.SetVal(true)
		case *redis.Cmd:
			c.SetVal(int64(1))
		case *redis.StatusCmd:
			c.SetVal("OK")
		}
		return nil
	}
}

func (answerLocally) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// clientOnlyVariants are the go-redis based variants (plain client) with answerLocally
// installed. rueidislock has no hook point and is left out.
func clientOnlyVariants(addr string) ([]variant, error) {
	var out []variant
	for _, build := range []func() (variant, error){
		func() (variant, error) { return leaseVariant(addr, 1, true, leaseDefault, noNetwork) },
		func() (variant, error) { return leaseVariant(addr, 1, false, leaseDefault, noNetwork) },
		func() (variant, error) { return redislockVariant(addr, 1, noNetwork) },
		func() (variant, error) { return redsyncVariant(addr, 1, noNetwork) },
	} {
		v, err := build()
		if err != nil {
			for _, o := range out {
				o.close()
			}
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
