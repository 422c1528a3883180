package testkit

import (
	"bytes"
	"runtime"
	"time"
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
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(redialFrame)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
