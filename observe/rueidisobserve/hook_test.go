package rueidisobserve

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// rueidishookHook is rueidishook.Hook's method set, written out because the module proxy this
// project builds against serves no rueidishook release. Hook must keep satisfying it, so that
// rueidishook.WithHook(client, NewHook(obs)) compiles for users who have rueidishook.
type rueidishookHook interface {
	Do(client rueidis.Client, ctx context.Context, cmd rueidis.Completed) (resp rueidis.RedisResult)
	DoMulti(client rueidis.Client, ctx context.Context, multi ...rueidis.Completed) (resps []rueidis.RedisResult)
	DoCache(client rueidis.Client, ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) (resp rueidis.RedisResult)
	DoMultiCache(client rueidis.Client, ctx context.Context, multi ...rueidis.CacheableTTL) (resps []rueidis.RedisResult)
	Receive(client rueidis.Client, ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) (err error)
	DoStream(client rueidis.Client, ctx context.Context, cmd rueidis.Completed) rueidis.RedisResultStream
	DoMultiStream(client rueidis.Client, ctx context.Context, multi ...rueidis.Completed) rueidis.MultiRedisResultStream
}

// Hook satisfies rueidishookHook, or this package's tests do not compile.
var _ rueidishookHook = Hook{}
