// Package observe derives lockwatch's library metric contract (lock_acquire_wait_seconds,
// lock_renewals_total, lock_releases_total, lock_held, lock_held_seconds) from the commands an
// existing lock library sends, without changing the library: bsm/redislock, go-redsync/redsync
// and rueidislock are recognised by the shape of their commands and by their Lua scripts.
//
//	obs, err := observe.New(observe.Options{
//		Registerer: prometheus.DefaultRegisterer,
//		Namespaces: []observe.Namespace{{Name: "scheduler", Pattern: "scheduler:job:*"}},
//	})
//	rdb.AddHook(obs.Hook()) // the go-redis v9 client redislock or redsync's goredis pool uses
//
// An application instrumented with OpenTelemetry passes Options.MeterProvider instead of a
// Registerer; the series are the same after Prometheus' OTLP translation.
//
// For rueidis clients (rueidislock), the adapter lives in the separate module
// github.com/lockwatch/lockwatch/observe/rueidisobserve, so that rueidis never enters this
// module's dependency graph.
//
// What a hook on the wire can and cannot tell is documented in docs/observe.md. In short: lock
// values (tokens) pass through the hook and are only ever hashed in memory to tell one holder's
// commands from another's; they reach no label, log line or error. Per-lock state exists only
// while a lock is held or waited for, expires with the lock's own TTL, and is capped.
package observe
