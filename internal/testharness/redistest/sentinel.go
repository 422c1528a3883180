package redistest

import (
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// sentinelDownAfter is short so that a test which kills the master sees it marked down within
// seconds, not Redis's default 30.
const sentinelDownAfter = time.Second

// StartSentinel launches a Redis Sentinel on a free loopback port watching master under name,
// and stops it when tb ends. Its Addr is for Sentinel clients (redis.NewSentinelClient,
// redis.FailoverOptions); Kill, Restart, Pause and Resume work as for a server.
func StartSentinel(tb testing.TB, master *Server, name string, opts ...Option) *Server {
	tb.Helper()
	mon := redisproc.Monitor{Name: name, MasterAddr: master.Addr, DownAfter: sentinelDownAfter}
	return Start(tb, append([]Option{func(c *redisproc.Config) { c.Sentinel = &mon }}, opts...)...)
}
