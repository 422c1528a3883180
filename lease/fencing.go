package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// fencedSetScript applies a write only while the lock's fence key holds the writer's fence, that
// is while no newer lease of the lock has been issued and the writer's own fence key still
// lives, atomically with the check. The fence key is what acquisition writes in the same step
// as the lock, so a stale holder is refused from the moment a newer lease exists, whether or
// not the new holder has written; and a fence key that is gone (it expired FenceRetention after
// the lease could last, or Redis lost it) refuses every writer, because whoever wrote it can no
// longer hold the lock; if the lock does still hold its holder's token (the fence key alone was
// evicted, or deleted by another client), only until the holder's next renew writes it again.
// KEYS[1] the lock's fence key, KEYS[2] data key; ARGV[1] fence, ARGV[2] value, ARGV[3] TTL in
// ms (0: no expiry). Returns 1 when applied, 0 when rejected.
var fencedSetScript = wire.NewScript(`
if tonumber(redis.call('get', KEYS[1])) ~= tonumber(ARGV[1]) then
	return 0
end
if ARGV[3] == '0' then
	redis.call('set', KEYS[2], ARGV[2])
else
	redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
return 1
`)

// FencedSet is the fencing guard for data kept beside the lock, in the lock's Redis and cluster
// slot: it sets key to value (expiring after ttl; ttl ≤ 0 means no expiry) only if fence is the
// fence of the newest lease issued on lockKey, and returns ErrStaleFence otherwise. The check
// and the write are one script, so once a newer lease exists every older one is refused, even
// before the new holder writes. The same lease may write many times while its fence key lives
// (acquisition writes it; every renew extends it to FenceRetention past the lock's expiry).
//
// key must share lockKey's hash tag so that one script can read the fence key and write key on
// Redis Cluster, on single nodes too (so code that works in development does not break on a
// cluster): for the lock "job:42" write "{job:42}:result", for "{job:42}:lock" any
// "{job:42}:…". Neither key may collide with a companion key: a data key shaped like a fence,
// write-fence or holder key ("{job:42}:fence", the lock's own fence key) is refused with
// ErrInvalidKey, as is a lock key that Acquire refuses so. Data kept elsewhere (another slot,
// another Redis, a database) is guarded by claiming it at acquisition instead: see Guard and
// package sqlfence.
//
// The write is bounded by Policy.RenewTimeout, the namespace's store-operation timeout. Each
// applied or rejected write is counted in lock_fenced_writes_total.
func (n *Namespace) FencedSet(ctx context.Context, lockKey string, fence int64, key string, value any, ttl time.Duration) error {
	if ctx == nil {
		return errNilContext
	}
	if fence <= 0 {
		return ErrNoFence
	}
	if lockKey == "" || !lockkeys.SameSlot(lockKey) {
		return fmt.Errorf("%w: lock key %q has no fence key in its own cluster slot", ErrInvalidKey, lockKey)
	}
	if clash := companionClash(lockKey, true); clash != "" {
		return fmt.Errorf("%w: lock key %q %s", ErrInvalidKey, lockKey, clash)
	}
	if key == "" || lockkeys.SlotTag(key) != lockkeys.SlotTag(lockKey) {
		return fmt.Errorf("%w: data key %q must have the hash tag {%s} of lock key %q to be written beside it (use a Guard for data elsewhere)",
			ErrInvalidKey, key, lockkeys.SlotTag(lockKey), lockKey)
	}
	if clash := companionClash(key, false); clash != "" {
		return fmt.Errorf("%w: data key %q %s", ErrInvalidKey, key, clash)
	}
	ctx, bound := wire.BoundBy(ctx, time.Now().Add(n.policy.RenewTimeout), errRenewTimeout)
	defer bound.End()
	// The fence key and the data key on two masters of a reshard are waited out within the
	// write's bound (whileSlotMoves).
	var applied int64
	err := n.whileSlotMoves(ctx, func() (err error) {
		applied, err = n.client.runScript(ctx, fencedSetScript, 2, lockkeys.Fence(lockKey), key, fence, value, ttlMs(ttl))
		return err
	})
	if err != nil {
		return fmt.Errorf("lease: fenced write %q in namespace %s: %w", key, n.name, err)
	}
	n.RecordFencedWrite(applied == 1)
	if applied == 0 {
		return fmt.Errorf("%w: key %q, fence %d is not the newest lease of %q", ErrStaleFence, key, fence, lockKey)
	}
	return nil
}

// ttlMs is a data TTL as a PX argument: 0 for none, at least 1 otherwise.
func ttlMs(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return max(ttl.Milliseconds(), 1)
}

// RecordFencedWrite counts one write through a fencing guard kept outside this package (the
// SQL guard in package sqlfence, or a store of your own) in lock_fenced_writes_total, as
// applied or rejected, under the namespace's lock_namespace label. FencedSet and Guard count
// their own writes. It does nothing when the Client has no Registerer (or n is nil).
func (n *Namespace) RecordFencedWrite(applied bool) {
	if n != nil {
		n.m.fencedWrite(applied)
	}
}

// fenceKeyExpiry is the fence key's PX in ms: TTL + FenceRetention, set by acquisition and by
// every renew.
func (n *Namespace) fenceKeyExpiry() int64 {
	return (n.policy.TTL + n.policy.FenceRetention).Milliseconds()
}
