// Package demo is the workload behind lockwatch-demo and the end-to-end test: simulated
// replicas of the five seed patterns (scheduler, workflow, approval, reconciler, snapshot)
// taking real leases with the lease library on one Redis, processes of two services that lock
// with redis-py's and Redisson's clients (their commands replayed from Go), and the turbulence
// that makes each kind of lock trouble happen within a minute.
//
// Where to look: workload.go (New, Run, the Options), namespaces.go (the lease namespaces and
// their policies, scaled down from the seeds, and the other clients' two), replicas.go and workers.go (the simulated
// processes and what they do), other_clients.go (the redis-py and Redisson processes, whose
// locks lapse and are taken over), turbulence.go and network_link.go (the injected faults, through
// a go-redis hook on each replica's client), status_line.go and repeated_warnings.go (what the
// terminal shows; exporter_lifecycle.go reads the exporter's lapse and takeover counters for
// it), exporter_config.go (the exporter configuration for the demo's keys),
// key_cleanup.go (removing the demo's keys on exit) and redis_server.go (the demo's own
// redis-server, through internal/redisproc).
//
// Only cmd/lockwatch-demo and tests import it; the lock-exporter binary links none of it.
package demo
