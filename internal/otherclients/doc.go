// Package otherclients replays from Go what lock clients of other languages send to Redis to
// take, renew and release a lock: redis-py's Lock (a string key, SET NX PX and three Lua
// scripts) and Redisson's RLock (a hash key and three Lua scripts). The integration tests replay
// Redisson with it, since its jar cannot be fetched where they run, and lockwatch-demo drives
// both, so the demo shows other clients' locks lapsing without Python or a JVM.
//
// Tokens and holder fields are capabilities: nothing here logs or returns them beyond the lock
// object that made them.
package otherclients

import "errors"

// ErrNotOwned is what a client's release or renewal answers when the lock is no longer its own:
// redis-py's LockNotOwnedError, Redisson's IllegalMonitorStateException at unlock, its
// watchdog's renewal that finds no field.
var ErrNotOwned = errors.New("lock not owned")
