package drills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// redisLog collects go-redis' own log lines (dial failures during outages); every audit
// searches it for tokens too.
var redisLog = &testkit.SyncBuffer{}

type redisLogger struct{}

func (redisLogger) Printf(_ context.Context, format string, v ...any) {
	fmt.Fprintf(redisLog, format+"\n", v...)
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(holderEnv); cfg != "" {
		os.Exit(holderMain(cfg)) // a holder process of TestLostUpdates, not a test run
	}
	redis.SetLogger(redisLogger{})
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
