package demo

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// errPartition is what commands of a partitioned replica fail with.
var errPartition = errors.New("demo: injected network partition")

// link is a go-redis hook standing for the network between one simulated replica and Redis.
// Turbulence is injected here, on the real client the lease library uses, so the library sees
// exactly what a flaky network or a stopped process would show it: errors, late answers, silence.
type link struct {
	mu        sync.Mutex
	partition bool
	latency   time.Duration
	paused    chan struct{} // non-nil while paused; closed on resume
}

var _ redis.Hook = (*link)(nil)

// setPartition makes every command fail at once (a severed connection) while on.
func (l *link) setPartition(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partition = on
}

// setLatency delays every command by d (a congested network); 0 heals it.
func (l *link) setLatency(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.latency = d
}

// pause holds every command until resume, as a stop-the-world pause of the replica's process
// would: nothing reaches Redis, and callers wait out their own deadlines.
func (l *link) pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused == nil {
		l.paused = make(chan struct{})
	}
}

func (l *link) resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused != nil {
		close(l.paused)
		l.paused = nil
	}
}

// heal ends every fault.
func (l *link) heal() {
	l.setPartition(false)
	l.setLatency(0)
	l.resume()
}

// admit applies the current fault to one command or pipeline.
func (l *link) admit(ctx context.Context) error {
	l.mu.Lock()
	partition, latency, paused := l.partition, l.latency, l.paused
	l.mu.Unlock()
	if partition {
		return errPartition
	}
	if paused != nil {
		select {
		case <-paused:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

func (l *link) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := l.admit(ctx); err != nil {
			return nil, err
		}
		return next(ctx, network, addr)
	}
}

func (l *link) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := l.admit(ctx); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (l *link) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := l.admit(ctx); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}
