// Package clients drives real Redis lock clients of other languages against a Redis address,
// so tests can learn what each CLIENT concluded about its lock — acquired, busy, released,
// renewed, or not its own any more — rather than what the commands it sent should have done.
//
// Four kinds of client are driven:
//
//   - [RedisPy]: redis-py's redis.lock.Lock from Debian's python3-redis, run by /usr/bin/python3
//     (python/redispy_driver.py);
//   - [Redlock]: npm's redlock v5 on ioredis (node/driver.cjs);
//   - [RedisSemaphore]: npm's redis-semaphore Mutex on ioredis (node/driver.cjs);
//   - [Redisson]: the wire protocol of Redisson's RedissonLock, replayed from Go (redisson.go),
//     because Redisson's jar cannot be fetched on the test machines.
//
// On a Redis Cluster ([StartCluster]) redis-py runs through its RedisCluster and Redisson's
// replay through a go-redis ClusterClient: both follow MOVED and ASK while a slot migrates. The
// node clients are not driven there ([ErrNoClusterDriver]).
//
// The redis-py and node clients run as child processes that read one JSON step per line on stdin
// and answer one JSON outcome per line on stdout; the node versions are pinned in
// node/package.json and node/package-lock.json. A client that is not installed fails the test
// with one line naming the package and the install command ([ErrClientMissing]); it is never
// skipped.
//
// On top of the drivers, a [Runner] plays named holders on keys in a scripted order and records
// the truth per key (the [Truth]): the ordered holds, each acquired, renewed, and ended released
// or lapsed, where a lapse is the client's own not-owned answer and a takeover is the
// acquisition that followed a lapse. Those counts are what the exporter's lifecycle counters
// should equal. [Runner.Lapse] makes a key lapse deterministically: acquire with a short TTL,
// poll until Redis has dropped the key, then let another holder acquire.
//
// Holders' tokens never leave the client processes: outcomes carry results and error classes
// only.
package clients
