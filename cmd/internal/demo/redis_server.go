package demo

import (
	"context"
	"errors"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// ErrNoRedisServer is returned by StartRedis when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redis-server not found on PATH: install it (Debian: apt-get install redis-server) or pass --redis.addr")

// StartRedis starts the demo's own redis-server from PATH on a free 127.0.0.1 port (loopback
// only, no persistence, in a temporary directory that Stop removes) and waits until it answers.
func StartRedis(ctx context.Context) (*redisproc.Process, error) {
	proc, err := redisproc.Start(ctx, redisproc.Config{})
	if errors.Is(err, redisproc.ErrNoBinary) {
		return nil, ErrNoRedisServer
	}
	return proc, err
}
