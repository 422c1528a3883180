// Package drills holds lockwatch's reliability and security drills: tests that run the lease
// library and the exporter against real redis-server processes while faults are injected for
// real (a TCP fault proxy, SIGSTOP/SIGCONT, killed and restarted servers, a Redis Cluster
// failover) and assert both what the callers saw and what the metrics say.
//
// The package has no API; docs/reliability.md lists every drill, what it injects, what holds
// and the command that reruns it.
package drills
