package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/redis/go-redis/v9"
)

// drain reads the feed up to now (a TIME round trip) and re-reads every key it named. It
// returns a resync reason when the feed is lost or a push demands one, and an error when Redis
// did not answer the re-reads (the keys stay queued). syncMu is held.
func (n *Node) drain(ctx context.Context) (string, error) {
	if n.feed == nil {
		return ResyncConnectionLost, nil
	}
	return n.drainPinged(ctx, n.feed.Ping(ctx))
}

// drainPinged is drain after the feed's round trip, which returned pingErr. syncMu is held.
func (n *Node) drainPinged(ctx context.Context, pingErr error) (string, error) {
	if pingErr != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return ResyncConnectionLost, nil
	}
	changed, changedBy, lost := n.feed.Take()
	keys := slices.Collect(maps.Keys(changed))
	if n.changedSince != nil {
		for _, k := range keys {
			n.changedSince[k] = true
		}
	}
	if lost != "" {
		return lost, nil
	}
	n.drainEvents, n.drainChanged, n.drainChangedBy = n.feed.TakeEvents(), changed, changedBy
	defer func() { n.drainEvents, n.drainChanged, n.drainChangedBy = nil, nil, 0 }()
	if err := n.reread(ctx, n.idx, keys); err != nil {
		n.feed.Requeue(changed, n.drainEvents)
		return "", err
	}
	n.handOverEvents()
	n.mu.Lock()
	redirected := n.redirected
	n.redirected = false
	n.mu.Unlock()
	if redirected {
		return ResyncSlotsMoved, nil
	}
	return "", nil
}

// reread inspects keys with the walk's inspector (TYPE, PEXPIRETIME on Redis 7 or else PTTL,
// OBJECT IDLETIME; a fence key's expiry alone), pipelined in batches, and applies the replies to idx;
// a key a notifications drain's events say is gone is applied so without a read (knownGone).
// It returns an error when Redis did not answer (or answered that it cannot serve yet, BUSY
// say): the caller keeps the keys queued. A command the ACL refuses is a refused grant: the
// index cannot follow any change, and the error says so (isRefusal). A key whose own read
// failed (NOPERM on the key) is kept in unreadable, see noteUnreadable. syncMu is held.
func (n *Node) reread(ctx context.Context, idx *KeyIndex, keys []string) error {
	n.mu.Lock()
	absolute := n.absolute
	n.mu.Unlock()
	keys, gone := n.knownGone(keys)
	in := walk.NewInspector(n.client, &n.noIdle, walk.InspectOptions{ExpireTime: absolute, ExpiryAlone: true, FenceExpiry: true, ReadHolder: n.cls.HolderReader(),
		HolderValue: n.holderValueReader(), HashHolder: n.Life.HolderHash})
	size := n.Opts.Walk.BatchSize
	for from := 0; from < len(keys); from += size {
		batch := keys[from:min(from+size, len(keys))]
		at := n.clock.Now()
		replies, idleKnown := in.Inspect(ctx, batch, true)
		n.noteHolderRefusals(replies)
		st := ReadStamp{At: at, IdleKnown: idleKnown, Absolute: absolute, Namespaces: n.namespaces}
		follow := n.lifecycleMask()
		for k := range replies {
			if err := n.applyReread(idx, batch[k], &replies[k], st, follow); err != nil {
				return err
			}
			n.keepWithinBudget(idx)
		}
	}
	// Applied once every read succeeded: a failed re-read queues the drain's keys and events
	// again, and they are counted when applied, not twice.
	st := ReadStamp{At: n.clock.Now(), Absolute: absolute, Namespaces: n.namespaces}
	for _, k := range gone {
		removed := walk.KeyReply{Gone: true}
		if err := n.applyReread(idx, k, &removed, st, n.lifecycleMask()); err != nil {
			return err
		}
	}
	n.keepWithinBudget(idx) // a namespace another master's index sent to the walk
	n.mu.Lock()
	n.entries = idx.Len()
	n.mu.Unlock()
	return nil
}

// knownGone splits keys into those to read and those a notifications drain's events say are
// gone: the last event of the key is its removal. Events reach the feed in the order Redis
// published them, and every one published before the drain's round trip came before its reply,
// so a key written again after its removal has a later event. Tracking names a changed key
// without the change: every key is read. So is every key on a Cluster master, where a del may
// be a slot migration's, which the read's redirect reports. syncMu is held.
func (n *Node) knownGone(keys []string) (read, gone []string) {
	if len(n.drainEvents) == 0 || n.clusterMaster {
		return keys, nil
	}
	read = make([]string, 0, len(keys))
	for _, k := range keys {
		if events := n.drainEvents[k]; len(events) > 0 && isRemoval(events[len(events)-1]) {
			gone = append(gone, k)
		} else {
			read = append(read, k)
		}
	}
	return read, gone
}

// isRemoval reports whether a keyspace event leaves its key gone. The rarer ways out of a
// database ("rename_from", "move_from") are read like any other change.
func isRemoval(event string) bool {
	switch event {
	case "del", "expired", "evicted":
		return true
	}
	return false
}

// applyReread applies one key's re-read to idx, and counts what it changed in the lifecycles of
// the namespaces in follow (lifecycleMask), or returns the error that ends the re-read. syncMu
// is held.
func (n *Node) applyReread(idx *KeyIndex, key string, r *walk.KeyReply, st ReadStamp, follow uint64) error {
	mask := n.maskOf(key)
	switch {
	case unanswered(r.Err):
		return r.Err
	case commandRefused(r.Err):
		return &TrackingRefusedError{Err: r.Err}
	case walk.IsRedirect(r.Err):
		// The key's slot is being migrated: the node's keys change by MIGRATE, whose
		// invalidations a re-read during the move cannot follow. Resync the node.
		n.mu.Lock()
		n.redirected = true
		n.mu.Unlock()
	case r.Err != nil:
		return n.noteUnreadable(key, mask, r.Err)
	default:
		delete(n.unreadable, key)
		old, had := idx.Get(key)
		returned, back := n.returnedHold(key, had, r)
		if r.Migrating || back {
			// MIGRATE moved the key: neither an end here nor an acquisition on its new master.
			n.noteSlotMove()
			n.noteDeparture(key, old, had, r)
			follow = 0
		}
		idx.Apply(key, mask, r, st)
		n.observe(idx, key, old, had, r.HolderHash, st, follow)
		if cur, ok := idx.Get(key); back && ok {
			cur.WithHold(returned)
			idx.Set(key, cur)
		}
	}
	return nil
}

// noteUnreadable records that key, of the namespaces in mask, could not be read. Past the key
// budget of such keys the index refuses: it would hold more names it cannot vouch for than it
// may hold keys, and the walk reports each namespace's failure as well. syncMu is held.
func (n *Node) noteUnreadable(key string, mask uint64, err error) error {
	if mask == 0 {
		delete(n.unreadable, key) // no namespace the index serves wants it any more
		return nil
	}
	if n.unreadable == nil {
		n.unreadable = map[string]error{}
	}
	n.unreadable[key] = err
	if len(n.unreadable) > n.Opts.KeyBudget {
		return &TrackingRefusedError{Err: fmt.Errorf("%d changed keys cannot be read, more than the index key budget: %w", len(n.unreadable), err)}
	}
	return nil
}

// retryUnreadable re-reads every key whose last re-read was refused: a scrape's figures are
// exact once the grant is given, without waiting for the key to change. syncMu is held.
func (n *Node) retryUnreadable(ctx context.Context) error {
	if len(n.unreadable) == 0 {
		return nil
	}
	return n.reread(ctx, n.idx, slices.Sorted(maps.Keys(n.unreadable)))
}

// errKeyUnreadable is a namespace's error while keys of it that changed cannot be re-read.
var errKeyUnreadable = errors.New("changed keys cannot be read")

// unreadableErrs is, by namespace bit, the error of the namespaces that hold unreadable keys: it
// names the first such key and counts the others. syncMu is held.
func (n *Node) unreadableErrs() map[int]error {
	first, count := map[int]string{}, map[int]int{}
	for key := range n.unreadable {
		for m := n.maskOf(key); m != 0; m &= m - 1 {
			b := bits.TrailingZeros64(m)
			count[b]++
			if first[b] == "" || key < first[b] {
				first[b] = key
			}
		}
	}
	errs := make(map[int]error, len(first))
	for b, key := range first {
		errs[b] = fmt.Errorf("%w: %q and %d more: %w", errKeyUnreadable, key, count[b]-1, n.unreadable[key])
	}
	return errs
}

// refuseIndex ends the index after a refused grant (isRefusal): the node refuses as a build
// would, one line per namespace, its feed closes and the feed loop ends, and the walk serves.
// syncMu is held.
func (n *Node) refuseIndex(err error) {
	n.refuse(err)
	if n.feed != nil {
		n.feed.Close()
		n.feed = nil
	}
}

// isRefusal reports whether err is a refused grant (TrackingRefusedError).
func isRefusal(err error) bool {
	var refused *TrackingRefusedError
	return errors.As(err, &refused)
}

// unanswered reports whether err is no answer, or an error reply by which Redis says it cannot
// serve yet (BUSY, LOADING, ...): the keys are read again later, as after a timeout.
func unanswered(err error) bool {
	var rerr redis.Error
	return walk.IsConnectionError(err) || errors.As(err, &rerr) && TransientReply(rerr.Error())
}

// commandRefused reports whether err is Redis refusing a command itself rather than one key:
// NOPERM for a command the ACL does not grant (Redis 6 to 8 say "permissions to run"; a key
// refused says "permissions to access"), or a command renamed away.
func commandRefused(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	return strings.HasPrefix(msg, "NOPERM ") && strings.Contains(msg, "permissions to run") || strings.HasPrefix(msg, "ERR unknown command")
}
