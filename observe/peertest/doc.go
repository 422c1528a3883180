// Package peertest proves the observe hook against the real lock libraries it claims to read
// (bsm/redislock, go-redsync/redsync, rueidislock) on real redis-server processes, and
// measures its overhead against the same libraries without it. It is a module of its own so
// that none of those libraries enters the main module's dependency graph.
package peertest
