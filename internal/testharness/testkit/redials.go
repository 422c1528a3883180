package testkit

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// redialFrame names go-redis' background redial of a pool whose dials failed (ConnPool.tryDial).
const redialFrame = "pool.(*ConnPool).tryDial"

// AwaitRedialsEnded waits up to timeout for go-redis' background redials to end, and reports
// whether they did. A pool whose dials failed PoolSize times redials on a goroutine of its own
// that sleeps a second between attempts and notices that its pool was closed only after that
// sleep, so it outlives a closed client by up to a second; a leak check run right after a test
// against a Redis that refused connections would report it. A redial of a client never closed
// goes on for ever, so the wait ends at timeout and the leak check still reports it.
func AwaitRedialsEnded(timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		if !redialRunning() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// VerifyTestMain is goleak.VerifyTestMain for packages whose tests dial a Redis that refuses
// connections: it runs the tests, waits for go-redis' redials of closed clients to end
// (AwaitRedialsEnded), then fails the run on any goroutine left, a redial of a client never
// closed included.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if code == 0 {
		AwaitRedialsEnded(5 * time.Second)
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// redialRunning reports whether a go-redis redial goroutine is running.
func redialRunning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(redialFrame))
}
