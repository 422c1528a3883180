package drills

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// redisLog collects go-redis' own log lines (dial failures during outages); every audit
// searches it for tokens too.
var redisLog = &syncBuffer{}

type redisLogger struct{}

func (redisLogger) Printf(_ context.Context, format string, v ...any) {
	fmt.Fprintf(redisLog, format+"\n", v...)
}

func TestMain(m *testing.M) {
	redis.SetLogger(redisLogger{})
	os.Exit(m.Run())
}
