// Package redishook holds what lockwatch's go-redis hooks share: a pass-through base for the
// tests' fault injectors and command counters, and AnswerLocally, the network-free client of the
// benchmarks (lease's, collectors', integration/otel's and bench/cmd/lockbench). The production
// binary links none of it (cmd/lock-exporter's deps test checks that).
package redishook

import "github.com/redis/go-redis/v9"

// PassThrough is a go-redis hook that hands every dial, command and pipeline on unchanged.
// Embed it in a hook type and define only the methods whose calls that type changes: go-redis
// wants all three, and the embedded ones stand in for the rest.
type PassThrough struct{}

var _ redis.Hook = PassThrough{}

// DialHook returns next.
func (PassThrough) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook returns next.
func (PassThrough) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook returns next.
func (PassThrough) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
