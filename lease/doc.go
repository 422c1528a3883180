// Package lease implements Redis lease locks whose behaviour under renew trouble is an explicit,
// per-namespace policy, and which report what happened to them as Prometheus metrics.
//
// A Client wraps any go-redis UniversalClient (single node, Sentinel or Cluster). Each lock
// namespace ("scheduler", "workflow", "approval", …) is declared once with a Policy: lease TTL,
// renew cadence, what to do when renewal keeps failing (Abandon or Continue), whether release
// deletes the key (Explicit) or leaves it to expire (HoldUntilExpiry), an optional in-process
// mutex in front of Redis, and optional fencing tokens.
//
//	c, err := lease.New(rdb, lease.Options{Registerer: prometheus.DefaultRegisterer})
//	jobs, err := c.Declare("scheduler", lease.Policy{TTL: time.Minute, Fencing: true})
//	err = jobs.Do(ctx, "scheduler:job:42", func(ctx context.Context, fence int64) error {
//		// ctx is cancelled with cause ErrAbandoned if the lease cannot be kept.
//		return nil
//	})
//
// Acquire is SET NX PX with a 128-bit random token; with fencing, the lock and its fence token
// (the server's time in microseconds, above the key's last fence) are taken in one Lua script.
// The fence and holder keys share the lock key's cluster slot: a key with a valid hash tag keeps
// it ("{job}:42" → "{job}:42:fence"), any other key becomes the tag ("job:42" →
// "{job:42}:fence", "{job:42}:holder"); a key with '}' outside a hash tag is refused where such
// a key is needed (ErrInvalidKey). So that no two keys share a companion, and no key is another's
// companion, keys shaped like a companion ("{job}:fence") are refused everywhere, and a key that
// is a hash tag alone ("{job}", whose companions would be those of "job") wherever it would get
// companions. Release and renew are Lua compare-and-delete and
// compare-and-pexpire, so a stale holder can never drop or extend a newer owner's lock. Tokens
// are capabilities: they never appear in errors, logs or metrics.
//
// What the library can promise about time is bounded by this process being scheduled: a
// holder whose renews fail is cancelled at its lease's ValidUntil by a timer, and a process
// that is paused (GC, CPU starvation, SIGSTOP) past that moment is cancelled only when it runs
// again, possibly after another replica took the lock. Check (*Lease).ValidUntil right before
// a side effect, and let the store reject stale writes by their fence token: FencedSet for data
// beside the lock (refused from the moment a newer lease exists), Guard.Claim at acquisition and
// Guard.Set for Redis data elsewhere, package sqlfence for SQL rows; neither the check nor the
// timer replaces the fence.
//
// A Client sends a lone or unhurried caller's command at once, on its own, and the commands of
// callers that arrive while its cap on sends is reached together as one go-redis pipeline,
// sent by one of those callers; each caller keeps its own context deadline, no goroutine of
// the library is involved, and the cap follows the throughput the sends measure. On a Cluster
// or Ring client (any client that is not a *redis.Client) every command is sent on its own.
package lease
