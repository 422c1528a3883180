package collectors

import "time"

// Result is what one scan saw. A Result returned before its scan ended (the caller's deadline
// came first) holds what had been seen by then, with Complete false where the scan was cut.
type Result struct {
	// Up is true when every Redis node scanned answered and no command failed.
	Up bool
	// Err is the first failure that made Up false; nil when Up is true.
	Err error
	// IdleTimeAvailable is false when a node refused OBJECT IDLETIME because its
	// maxmemory-policy is an LFU policy (idle time is not tracked then).
	IdleTimeAvailable bool
	// Namespaces holds one entry per configured namespace, in configuration order.
	Namespaces []NamespaceResult
}

// NamespaceResult aggregates one namespace's keys.
type NamespaceResult struct {
	Namespace Namespace
	// Keys counts live keys examined (keys that vanished between SCAN and PTTL are not counted).
	Keys int64
	// KeysWithoutTTL counts keys with no expiry.
	KeysWithoutTTL int64
	// MinTTL is the smallest remaining TTL; valid only when HasTTL.
	MinTTL time.Duration
	// HasTTL is true when at least one key with an expiry was seen.
	HasTTL bool
	// MaxIdle is the largest OBJECT IDLETIME; valid only when HasIdle.
	MaxIdle time.Duration
	// HasIdle is true when at least one key's idle time was read.
	HasIdle bool
	// Stalest lists at most TopK keys, stalest first.
	Stalest []KeyInfo
	// Truncated is true when the MaxKeys cap stopped the scan.
	Truncated bool
	// Complete is true when every node's SCAN of the namespace ran to its end (or to the cap)
	// without error before the deadline.
	Complete bool
	// Duration is how long the namespace's scan took, or ran until it was cut.
	Duration time.Duration
}
