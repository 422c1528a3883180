package wire

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// sharedAddr is a redis-server started once for the package; tests that pause a server start
// their own with redistest.
var sharedAddr string

func TestMain(m *testing.M) {
	os.Exit(redistest.RunShared(m, &sharedAddr))
}

// newTestSender is NewSender on a go-redis client of its own for addr (so hooks stay local),
// closed at the end of the test.
func newTestSender(t testing.TB, addr string, hooks ...redis.Hook) *Sender {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, h := range hooks {
		rdb.AddHook(h)
	}
	return NewSender(rdb)
}

// delIfEqualScript deletes KEYS[1] when it holds ARGV[1], as the library's release does: 1 when
// it deleted the key, 0 otherwise.
var delIfEqualScript = NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
	return redis.call('del', KEYS[1])
end
return 0`)

// setNX runs SET key v PX 10000 NX through s: true when it set the key.
func setNX(ctx context.Context, s *Sender, key string) (bool, error) {
	cmd := redis.NewBoolCmd(ctx, "set", key, "v", "px", 10_000, "nx")
	if err := s.Do(ctx, cmd); err != nil {
		return false, err
	}
	return cmd.Val(), nil
}

// setAndDelete sets key and deletes it again by script through s: two lock commands, as a
// lock cycle sends them.
func setAndDelete(ctx context.Context, s *Sender, key string) error {
	set, err := setNX(ctx, s, key)
	if err != nil {
		return err
	}
	if !set {
		return fmt.Errorf("SET %s NX found the key set", key)
	}
	deleted, err := s.Run(ctx, delIfEqualScript, 1, key, "v")
	if err == nil && deleted != 1 {
		err = fmt.Errorf("the script did not delete %s", key)
	}
	return err
}

// queued is how many commands wait in s for a place on the wire.
func queued(s *Sender) int {
	s.batch.mu.Lock()
	defer s.batch.mu.Unlock()
	return len(s.batch.queue)
}

// sendCap is s's cap on sends on the wire now.
func sendCap(s *Sender) int {
	s.batch.mu.Lock()
	defer s.batch.mu.Unlock()
	return s.batch.limit.cur
}

var keySeq atomic.Int64

// uniqueKey names a key no other test (or repeated run, with -count) uses.
func uniqueKey(t testing.TB) string {
	return fmt.Sprintf("test:%s:%d", t.Name(), keySeq.Add(1))
}

// waitFor polls cond until it holds; the test fails after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// callSlack is the fixed part of the slack of a bounded call's wall-clock check: under the race
// detector, with a fraction of a core, a call can overrun its bound by hundreds of
// milliseconds while the stall meter's own timer stays punctual. The failures these checks
// catch overrun by seconds: go-redis's retries of a read timeout, a call that waits for a
// frozen Redis for ever.
const callSlack = time.Second

// stallMeter measures the process's scheduling stalls for the rest of the test; wall-clock upper
// bounds take their slack from it, m.Slack(callSlack).
func stallMeter(t testing.TB) *testkit.StallMeter {
	m := testkit.StartStallMeter()
	t.Cleanup(m.Stop)
	return m
}
