package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// fencedSetScript applies a write only when the writer's fence is not older than the fence of
// the last applied write, and records the new fence, atomically. With a retention, records
// expire, and a write to a key without a record is applied only if its fence was issued within
// the retention: any newer fence that wrote since then would still have its record.
// KEYS[1] data key, KEYS[2] its write-fence key; ARGV[1] fence, ARGV[2] value, ARGV[3] TTL
// in ms (0: no expiry), ARGV[4] retention in µs (0: records never expire), ARGV[5] the record's
// expiry in ms. Returns 1 when applied, 0 when rejected.
var fencedSetScript = newScript(`
local fence = tonumber(ARGV[1])
local last = redis.call('get', KEYS[2])
if last then
	if fence < tonumber(last) then
		return 0
	end
elseif ARGV[4] ~= '0' then
	local now = redis.call('time')
	if fence < tonumber(now[1]) * 1000000 + tonumber(now[2]) - tonumber(ARGV[4]) then
		return 0
	end
end
if ARGV[3] == '0' then
	redis.call('set', KEYS[1], ARGV[2])
else
	redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
if ARGV[4] == '0' then
	redis.call('set', KEYS[2], ARGV[1])
else
	redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[5])
end
return 1
`)

// writeFenceSlack is how much longer than Policy.WriteFenceRetention a write-fence record
// lives: it absorbs fences that run ahead of the server's clock (a clock step back, or a
// failover to a node whose clock is behind), so that a record outlives every fence the age
// rule still accepts.
const writeFenceSlack = time.Minute

// FencedSet is the fencing guard for Redis writes: it sets key to value (expiring after ttl;
// ttl ≤ 0 means no expiry) only if no write with a newer fence has been applied to key, and
// returns ErrStaleFence otherwise. The same lease may write many times; once a newer lease has
// written, every older lease is rejected, however long it was paused. The last applied fence is
// kept in key's write-fence key (":writefence" appended, in key's cluster slot as the fence key
// is): without expiry, or, with Policy.WriteFenceRetention, for that long plus a minute after
// each write, in which case a write to a key without a record is rejected when its fence was
// issued more than the retention ago. The write is bounded by Policy.RenewTimeout, the
// namespace's store-operation timeout. Each applied or rejected write is counted in
// lock_fenced_writes_total.
func (n *Namespace) FencedSet(ctx context.Context, fence int64, key string, value any, ttl time.Duration) error {
	if fence <= 0 {
		return ErrNoFence
	}
	if key == "" || !lockkeys.SameSlot(key) {
		return fmt.Errorf("%w: %q cannot share a cluster slot with its write-fence key", ErrInvalidKey, key)
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	ctx, cancel := boundBy(ctx, time.Now().Add(n.policy.RenewTimeout), errRenewTimeout)
	defer cancel()
	c := n.client
	retention := n.policy.WriteFenceRetention
	recordMs := int64(0)
	if retention > 0 {
		recordMs = (retention + writeFenceSlack).Milliseconds()
	}
	applied, err := c.runScript(ctx, fencedSetScript, 2, key, lockkeys.WriteFence(key), fence, value, ms,
		retention.Microseconds(), recordMs)
	if err != nil {
		return fmt.Errorf("lease: fenced write %q in namespace %s: %w", key, n.name, err)
	}
	n.RecordFencedWrite(applied == 1)
	if applied == 0 {
		return fmt.Errorf("%w: key %q, fence %d", ErrStaleFence, key, fence)
	}
	return nil
}

// RecordFencedWrite counts one write through a fencing guard kept outside this package (the
// SQL guard in package sqlfence, or a store of your own) in lock_fenced_writes_total, as
// applied or rejected, under the namespace's lock_namespace label. FencedSet counts its own
// writes. It does nothing when the Client has no Registerer (or n is nil).
func (n *Namespace) RecordFencedWrite(applied bool) {
	if n != nil {
		n.m.fencedWrite(applied)
	}
}

// fenceKeyExpiry is the fence key's PX in ms: TTL + FenceRetention.
func (n *Namespace) fenceKeyExpiry() int64 {
	return (n.policy.TTL + n.policy.FenceRetention).Milliseconds()
}
