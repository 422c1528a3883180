package collectors

import "github.com/lockwatch/lockwatch/collectors/internal/walk"

// ConnectionsPerNode is the most connections scans hold on one Redis node at once, whatever the
// number of namespaces: a walk has one SCAN loop and inspectWorkers PTTL/OBJECT IDLETIME
// pipelines in flight per node, and besides the walk that is sending commands, one that reached
// its deadline may still be waiting up to commandGrace for its last replies. On Redis Cluster it
// is per master, since each node has its own pool. In ModeAuto the index's build (a walk of its
// own) can run beside a scrape's walk of the namespaces it does not serve yet, and a scrape's
// re-reads take one more; the change feed has a dedicated connection outside the pool. The look
// for keys of uncounted types (Options.ReportUncountedTypes) holds one more, at start and then
// once per backstop interval, whenever a scrape comes.
//
// Size the client's pool to at least this. With a smaller one the scan queues for connections,
// and go-redis fails a wait longer than its PoolTimeout with "connection pool timeout", which the
// scan cannot tell from a Redis fault: the scrape would report lock_exporter_up 0 while Redis is
// fine.
func ConnectionsPerNode() int {
	return 3*(1+walk.InspectWorkers) + 2
}
