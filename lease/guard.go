package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// guardScript raises a data key's write-fence record to the caller's fence unless the record
// is newer, and (for a write) sets the data key, atomically. With a retention, records expire,
// and a key without a record accepts a fence only if it was issued within the retention: any
// newer fence that claimed or wrote the key since then would still have its record.
// KEYS[1] the data key's write-fence key, KEYS[2] (a write only) the data key; ARGV[1] fence,
// ARGV[2] retention in µs (0: records never expire), ARGV[3] the record's expiry in ms,
// ARGV[4] value, ARGV[5] the data's TTL in ms (0: no expiry). Returns 1 when the record was
// raised (and the write applied), 0 when a newer fence holds the key, and an error naming the
// record, with nothing written, when the record holds something that is not a fence (another
// client wrote it).
var guardScript = wire.NewScript(`
local fence = tonumber(ARGV[1])
local last = redis.call('get', KEYS[1])
if last then
	if not tonumber(last) then
		return redis.error_reply('ERR write-fence record ' .. KEYS[1] .. ' holds no fence (another client wrote it): nothing written')
	end
	if fence < tonumber(last) then
		return 0
	end
elseif ARGV[2] ~= '0' then
	local now = redis.call('time')
	if fence < tonumber(now[1]) * 1000000 + tonumber(now[2]) - tonumber(ARGV[2]) then
		return 0
	end
end
if ARGV[2] == '0' then
	redis.call('set', KEYS[1], ARGV[1])
else
	redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[3])
end
if KEYS[2] then
	if ARGV[5] == '0' then
		redis.call('set', KEYS[2], ARGV[4])
	else
		redis.call('set', KEYS[2], ARGV[4], 'PX', ARGV[5])
	end
end
return 1
`)

// writeFenceSlack is how much longer than Policy.WriteFenceRetention a write-fence record
// lives: it absorbs fences that run ahead of the server's clock (a clock step back, or a
// failover to a node whose clock is behind), so that a record outlives every fence the age
// rule still accepts.
const writeFenceSlack = time.Minute

// Guard fences Redis data kept away from the lock: in another Redis, or in the lock's Redis
// outside the lock's cluster slot. Such data cannot be checked against the lock's fence key in
// one script, so each data key carries a write-fence record (its key plus ":writefence", in its
// slot) holding the newest fence that claimed or wrote it, and a write is applied only if its
// fence is not older than the record.
//
// A record rises when the new holder writes, so a stale holder could still write in between
// unless the new holder raises the records first: call Claim with the keys the lease guards
// right after acquiring, before reading them. From then on every older fence is refused. Make
// a Guard once per data Redis with Namespace.Guard; it is safe for concurrent use.
type Guard struct {
	ns *Namespace
	// send runs the guard's script on the data Redis, each call on its own.
	send *wire.Sender
}

// Guard returns the fencing guard for data on rdb (a single-node, Sentinel or Cluster client;
// nil means the lock's own Redis). Its calls are bounded by Policy.RenewTimeout, keep records
// as Policy.WriteFenceRetention says, and count writes in the namespace's
// lock_fenced_writes_total.
func (n *Namespace) Guard(rdb redis.UniversalClient) *Guard {
	if rdb == nil {
		rdb = n.client.rdb
	}
	return &Guard{ns: n, send: wire.NewSingleSender(rdb)}
}

// Claim raises the write-fence record of each key to fence, so that from its return on every
// write or claim with an older fence is refused. It returns ErrStaleFence, naming the key, when
// a newer fence already holds one of them (the caller is stale: stop), and claims the keys one
// at a time in order, each bounded by Policy.RenewTimeout, so that keys may live in different
// cluster slots. Claiming a key again with the same fence is harmless. Claims are not counted
// in lock_fenced_writes_total. Claim and Set refuse with ErrInvalidKey a key whose write-fence
// record would be another key's ("{x}" has the record of "x") or that is itself a companion key
// ("{x}:writefence").
func (g *Guard) Claim(ctx context.Context, fence int64, keys ...string) error {
	if ctx == nil {
		return errNilContext
	}
	if fence <= 0 {
		return ErrNoFence
	}
	for _, key := range keys {
		if err := checkDataKey(key); err != nil {
			return err
		}
	}
	for _, key := range keys {
		raised, err := g.run(ctx, fence, key, nil, 0, false)
		if err != nil {
			return fmt.Errorf("lease: claim %q in namespace %s: %w", key, g.ns.name, err)
		}
		if !raised {
			return fmt.Errorf("%w: claim of key %q with fence %d", ErrStaleFence, key, fence)
		}
	}
	return nil
}

// Set sets key to value (expiring after ttl; ttl ≤ 0 means no expiry) only if no newer fence has
// claimed or written key, and raises key's record to fence; it returns ErrStaleFence otherwise.
// The same lease may write many times. Each applied or rejected write is counted in
// lock_fenced_writes_total.
func (g *Guard) Set(ctx context.Context, fence int64, key string, value any, ttl time.Duration) error {
	if ctx == nil {
		return errNilContext
	}
	if fence <= 0 {
		return ErrNoFence
	}
	if err := checkDataKey(key); err != nil {
		return err
	}
	applied, err := g.run(ctx, fence, key, value, ttlMs(ttl), true)
	if err != nil {
		return fmt.Errorf("lease: fenced write %q in namespace %s: %w", key, g.ns.name, err)
	}
	g.ns.RecordFencedWrite(applied)
	if !applied {
		return fmt.Errorf("%w: key %q, fence %d", ErrStaleFence, key, fence)
	}
	return nil
}

// checkDataKey refuses keys whose write-fence record could land in another cluster slot, and
// keys that would collide with companion keys (see companionClash): every guarded key has a
// write-fence record.
func checkDataKey(key string) error {
	if key == "" || !lockkeys.SameSlot(key) {
		return fmt.Errorf("%w: %q cannot share a cluster slot with its write-fence key", ErrInvalidKey, key)
	}
	if clash := companionClash(key, true); clash != "" {
		return fmt.Errorf("%w: data key %q %s", ErrInvalidKey, key, clash)
	}
	return nil
}

// run runs guardScript for key: a write when write is set, else a claim.
func (g *Guard) run(ctx context.Context, fence int64, key string, value any, dataMs int64, write bool) (bool, error) {
	if g.ns.client.closed.Load() {
		// A Guard is its Client's: after Close it sends nothing, whatever Redis it writes to.
		return false, ErrClosed
	}
	p := &g.ns.policy
	ctx, bound := wire.BoundBy(ctx, time.Now().Add(p.RenewTimeout), errRenewTimeout)
	defer bound.End()
	recordMs := int64(0)
	if p.WriteFenceRetention > 0 {
		recordMs = (p.WriteFenceRetention + writeFenceSlack).Milliseconds()
	}
	var keysAndArgs []any
	numKeys := 1
	if write {
		numKeys, keysAndArgs = 2, []any{lockkeys.WriteFence(key), key,
			fence, p.WriteFenceRetention.Microseconds(), recordMs, value, dataMs}
	} else {
		keysAndArgs = []any{lockkeys.WriteFence(key), fence, p.WriteFenceRetention.Microseconds(), recordMs}
	}
	// The record and the data key on two masters of a reshard are waited out within the call's
	// bound (whileSlotMoves).
	var n int64
	err := g.ns.whileSlotMoves(ctx, func() (err error) {
		n, err = g.send.Run(ctx, guardScript, numKeys, keysAndArgs...)
		return err
	})
	return n == 1, err
}
