package observe

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// BenchmarkHookShapes is the hook's own work per lock cycle for the command shapes each peer
// library sends, as the library builds them (go-redis' argument types: integers for counts and
// expiries; rueidis' strings), on the Observer's real clock, with a new lock value every cycle
// as the libraries write, and for a command that is no lock command. No server: next answers
// as Redis would. The go-redis shapes run a second time without the hook ("…/without hook"):
// building and answering the commands alone, which the hook's figure includes. The peer
// benchmark (observe/peertest BenchmarkOverhead) measures the same work inside real cycles.
//
//	go test -run '^$' -bench HookShapes -benchmem ./observe/
func BenchmarkHookShapes(b *testing.B) {
	ctx := context.Background()
	const key = "jobs:bench"
	newObserver := func(b *testing.B) *Observer {
		o, err := New(Options{Registerer: prometheus.NewRegistry(), Namespaces: []Namespace{{Name: "jobs", Pattern: "*jobs:*"}}})
		if err != nil {
			b.Fatal(err)
		}
		return o
	}
	values := make([]string, 1024)
	for i := range values {
		values[i] = "value-" + strconv.Itoa(i) + "-0123456789abcdef"
	}
	goRedis := func(b *testing.B, hooked bool, acquire, release func(value string) redis.Cmder) {
		answer := func(_ context.Context, cmd redis.Cmder) error {
			switch c := cmd.(type) {
			case *redis.BoolCmd:
				c.SetVal(true)
			case *redis.Cmd:
				if c.Args()[1] == redislockObtainSHA {
					c.SetVal("OK")
				} else {
					c.SetVal(int64(1))
				}
			}
			return nil
		}
		process := func(ctx context.Context, cmd redis.Cmder) error {
			// Kept, so that the commands are built on the heap as through the hook.
			benchCommandSink = cmd
			return answer(ctx, cmd)
		}
		if hooked {
			process = newObserver(b).Hook().ProcessHook(answer)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			v := values[i%len(values)]
			i++
			_ = process(ctx, acquire(v))
			_ = process(ctx, release(v))
		}
	}
	goRedisShapes := []struct {
		name             string
		acquire, release func(value string) redis.Cmder
	}{
		{
			"redislock",
			func(v string) redis.Cmder {
				return redis.NewCmd(ctx, "evalsha", redislockObtainSHA, 1, key, v, 22, "10000")
			},
			func(v string) redis.Cmder {
				return redis.NewCmd(ctx, "evalsha", "cf0e94b2e9ffc7e04395cf88f7583fc309985910", 1, key, v)
			},
		},
		{
			"redsync",
			func(v string) redis.Cmder {
				return redis.NewBoolCmd(ctx, "set", key, v, "px", int64(10000), "nx")
			},
			func(v string) redis.Cmder {
				return redis.NewCmd(ctx, "evalsha", "e950836ed1e694540c503ef9972b8de518044d3b", 1, key, v)
			},
		},
	}
	for _, shape := range goRedisShapes {
		b.Run(shape.name, func(b *testing.B) { goRedis(b, true, shape.acquire, shape.release) })
		b.Run(shape.name+"/without hook", func(b *testing.B) { goRedis(b, false, shape.acquire, shape.release) })
	}
	b.Run("rueidislock", func(b *testing.B) {
		// Three parts under one value, PXAT expiries, as rueidislock's TryWithContext sends
		// them (the arguments built beforehand: rueidis builds them, not the hook).
		o := newObserver(b)
		pxat := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
		type cycle struct{ acquire, release [3][]string }
		cycles := make([]cycle, len(values))
		for i, v := range values {
			for part := range 3 {
				k := "lw:" + strconv.Itoa(part) + ":" + key
				cycles[i].acquire[part] = []string{"EVALSHA", "3875d208d9e377969d2022550302cc83ad17b584", "1", k, v, pxat}
				cycles[i].release[part] = []string{"EVALSHA", "9eb62214c9af87ae5f9a9f12bb4520281c0d2ae1", "1", k, v}
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			c := &cycles[i%len(cycles)]
			i++
			for _, args := range c.acquire {
				o.BeginStrings(args).Done(Reply{})
			}
			for _, args := range c.release {
				o.BeginStrings(args).Done(Reply{Int: 1, IsInt: true})
			}
		}
	})
	b.Run("not-a-lock-command", func(b *testing.B) {
		o := newObserver(b)
		process := o.Hook().ProcessHook(func(context.Context, redis.Cmder) error { return nil })
		cmd := redis.NewStringCmd(ctx, "get", key)
		b.ReportAllocs()
		for b.Loop() {
			_ = process(ctx, cmd)
		}
	})
}

// benchCommandSink keeps the last command of the runs without the hook.
var benchCommandSink redis.Cmder

// redislockObtainSHA is bsm/redislock v0.9.4's obtain script.
const redislockObtainSHA = "80a1b5f2cfccec3b7119ba7721d2127682b691a7"
