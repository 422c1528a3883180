package demo

import (
	"time"

	"github.com/lockwatch/lockwatch/lease"
)

// DefaultPrefix starts every key the demo writes, so that on a shared Redis it touches nothing
// else and can remove everything it wrote.
const DefaultPrefix = "lockwatch-demo:"

// Namespace is one demo lock namespace: how the workload takes its leases and how an exporter
// should watch its keys.
type Namespace struct {
	Name string
	// Pattern is the SCAN MATCH glob of the namespace's lock keys.
	Pattern string
	// TTL and RenewInterval are the declared lease policy; RenewInterval is 0 when holders do
	// not keep renewing (renewal disabled, or the key is left to expire by design).
	TTL           time.Duration
	RenewInterval time.Duration
	// MaxHold, when set, is the longest a lock of the namespace should be held: declared to the
	// exporter as expected_max_hold, so the exporter reads the holders' hold ages (the overview's
	// Longest holds) and LockHeldTooLong watches them.
	MaxHold time.Duration
	// Types are the Redis types of the namespace's lock keys, for the exporter: nil for strings,
	// hash for Redisson's locks.
	Types []string
	// Story says what the namespace's workers do and which turbulence they meet.
	Story string
	// client is the lock client the namespace's workers replay; policy is the lease policy of a
	// lease namespace, unused by the others.
	client clientKind
	policy lease.Policy
}

// clientKind is the lock client a namespace's workers use: the lease library, or the commands
// of another language's client replayed from Go (internal/otherclients).
type clientKind int

const (
	leaseClient clientKind = iota
	redisPyClient
	redissonClient
)

// Namespaces returns the demo's namespaces with keys under prefix: five taken with the lease
// library, one per seed pattern, then two taken with the commands of redis-py's and Redisson's
// locks (otherClientNamespaces). The seeds' durations are scaled down (a 60s scheduler lease
// becomes 6s) so that every kind of trouble shows within a minute; the ratios between TTL,
// renew interval and timeouts are kept.
func Namespaces(prefix string) []Namespace {
	return append(leaseNamespaces(prefix), otherClientNamespaces(prefix)...)
}

// otherClientNamespaces are locks of services written in other languages, which only the
// exporter sees: their lapses and takeovers show in its lifecycle counters, never in the lease
// library's metrics.
func otherClientNamespaces(prefix string) []Namespace {
	return []Namespace{
		{
			Name: "redispy", Pattern: prefix + "redispy:*",
			TTL:    2 * time.Second,
			Story:  "redis-py Lock(timeout=2s) replayed from Go (SET NX PX, release and extend by its Lua scripts); every third report job of redispy-b outlives the timeout without extending, the key lapses, redispy-a takes it over and b's release raises LockNotOwnedError",
			client: redisPyClient,
		},
		{
			Name: "redisson", Pattern: prefix + "redisson:*",
			TTL: 3 * time.Second, RenewInterval: time.Second, Types: []string{"hash"},
			Story:  "Redisson RLock replayed from Go (a hash lock, watchdog renewal every lease/3, unlock publishing on its channel); every third order of redisson-b runs while its watchdog misses its renewals, the lock lapses, redisson-a takes it over and b's unlock raises IllegalMonitorStateException",
			client: redissonClient,
		},
	}
}

// leaseNamespaces are the five seed patterns, taken with the lease library.
func leaseNamespaces(prefix string) []Namespace {
	return []Namespace{
		{
			Name: "scheduler", Pattern: prefix + "scheduler:*",
			TTL: 6 * time.Second, RenewInterval: 2 * time.Second, MaxHold: time.Minute,
			Story: "jobs under a fenced lease; replica scheduler-b loses its network every cycle and abandons its job after 2 failed renews, when its lease lapses before a third",
			policy: lease.Policy{
				TTL: 6 * time.Second, RenewInterval: 2 * time.Second, RenewTimeout: 500 * time.Millisecond,
				MaxRenewFailures: 3, OnRenewFailure: lease.Abandon, Fencing: true,
			},
		},
		{
			Name: "workflow", Pattern: prefix + "workflow:*",
			TTL: 3 * time.Second, RenewInterval: time.Second,
			Story: "runs under warn-and-continue leases behind a local mutex; a slow network lets the lease expire under workflow-a, whose renew and release then find it not owned",
			policy: lease.Policy{
				TTL: 3 * time.Second, RenewInterval: time.Second, RenewTimeout: 200 * time.Millisecond,
				OnRenewFailure: lease.Continue, LocalMutex: true,
			},
		},
		{
			Name: "approval", Pattern: prefix + "approval:*",
			TTL:   2 * time.Second,
			Story: "short unrenewed leases with a 500ms acquire deadline under contention; a slow approver outlives its TTL and its release is refused (stale release)",
			policy: lease.Policy{
				TTL: 2 * time.Second, DisableRenewal: true, AcquireTimeout: 500 * time.Millisecond,
				RetryBackoff: 25 * time.Millisecond, ReleaseTimeout: 2 * time.Second,
			},
		},
		{
			Name: "reconciler", Pattern: prefix + "reconciler:*",
			TTL:   6 * time.Second,
			Story: "a per-loop lease (TTL = 2 x 3s poll) never released, so expiry rotates ownership; a legacy cron script holds a lock here set without any expiry",
			policy: lease.Policy{
				TTL: 6 * time.Second, ReleaseMode: lease.HoldUntilExpiry,
			},
		},
		{
			Name: "snapshot", Pattern: prefix + "snapshot:*",
			TTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond,
			Story: "two writers every second through the fencing guard; snapshot-b is paused past its TTL and its late write is rejected",
			policy: lease.Policy{
				TTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond, Fencing: true,
			},
		},
	}
}
