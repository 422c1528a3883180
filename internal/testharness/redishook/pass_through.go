// Package redishook holds what lockwatch's go-redis hooks share: the tests' fault injectors and
// command counters, the demo's simulated network links and the benchmark's network-free
// client. The production binary links none of it.
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
