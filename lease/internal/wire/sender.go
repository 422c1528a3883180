// Package wire is how package lease reaches Redis: a Sender that runs commands and the
// library's Lua scripts (falling back from EVALSHA to EVAL when Redis lost a script), pipelining
// waiting commands under an adaptive cap on a client of one deployment, and the bound of each
// call (BoundBy) that carries the policy's deadline to go-redis. Lock semantics stay in lease;
// nothing here knows what a lock is.
package wire

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Sender runs commands on one go-redis client. It is safe for concurrent use.
type Sender struct {
	rdb redis.UniversalClient
	// batch pipelines the commands of callers that find the cap on sends reached; nil sends
	// every command on its own.
	batch *batcher
}

// NewSender returns the Sender for rdb. On a client of one deployment (single node or
// Sentinel) it pipelines commands that wait for a place on the wire (batcher). On a Cluster or
// Ring client it sends every command on its own: a cap on sends would be shared by every node,
// so one stalled node would hold it and delay commands bound for healthy nodes.
func NewSender(rdb redis.UniversalClient) *Sender {
	s := NewSingleSender(rdb)
	if one, ok := rdb.(*redis.Client); ok {
		s.batch = newBatcher(one)
	}
	return s
}

// NewSingleSender returns a Sender that sends every command on its own, one round trip each,
// as NewSender does on a Cluster client.
func NewSingleSender(rdb redis.UniversalClient) *Sender { return &Sender{rdb: rdb} }

// Do runs cmd and returns its error when it has its reply or ctx ends.
func (s *Sender) Do(ctx context.Context, cmd redis.Cmder) error { return s.do(ctx, cmd, "") }

// Run runs sc with its first numKeys keysAndArgs as keys and the rest as arguments; every script
// of the library returns an integer. It builds the EVALSHA itself rather than calling go-redis's
// Script.Run, which costs a few more allocations per call, and runs the script again by source
// when Redis lost it, as Script.Run does.
func (s *Sender) Run(ctx context.Context, sc Script, numKeys int, keysAndArgs ...any) (int64, error) {
	cmd := sc.evalSha(ctx, numKeys, keysAndArgs)
	if err := s.do(ctx, cmd, sc.src); err != nil {
		return 0, err
	}
	return cmd.Int64()
}

// do runs cmd; src is the script's source when cmd is an EVALSHA, for the NOSCRIPT fallback.
func (s *Sender) do(ctx context.Context, cmd redis.Cmder, src string) error {
	if s.batch != nil {
		return s.batch.do(ctx, cmd, src)
	}
	processWithFallback(ctx, s.rdb, cmd, src)
	return cmd.Err()
}
