package collectors

// ConnectionsPerNode is the most connections a scan of the given number of namespaces holds on
// one Redis node at once: scanNode scans every namespace concurrently, each with one SCAN loop
// and inspectWorkers PTTL/OBJECT IDLETIME pipelines in flight. On Redis Cluster it is per master,
// since each node has its own pool.
//
// Size the client's pool to at least this. With a smaller one the scan queues for connections,
// and go-redis fails a wait longer than its PoolTimeout with "connection pool timeout", which the
// scan cannot tell from a Redis fault: the scrape reports lock_exporter_up 0 while Redis is fine.
func ConnectionsPerNode(namespaces int) int {
	return max(namespaces, 0) * (1 + inspectWorkers)
}
