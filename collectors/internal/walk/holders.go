package walk

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/companions"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// readHolders GETs the holder key ({L}:holder, internal/lockkeys) of every key in the walk's top-K lists,
// once the walk has ended and before its final Result is built, in one pipeline routed by slot.
// It never reads a lock key (the value is the owner's token), only the companion the lease
// library writes beside it with Policy.RecordHolder; keys of other libraries have none. A walk
// cut by its deadline skips it: its waiters already have their answer. A holder that cannot be
// read (an ACL without GET on *:holder, a key of another type) is left out, not an error: the
// lock is still counted and listed.
func (w *Walker) readHolders(f *Run) {
	if f.ctx.Err() != nil {
		return
	}
	keys := f.holderCandidates()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	found, firstErr := ReadHolderValues(ctx, w.client, keys)
	f.setHolders(found)
	if firstErr != nil {
		w.opts.Logger.Debug("holder keys unreadable; locks are listed without holders", "err", firstErr)
	}
}

// ReadHolderValues GETs the holder key of each of keys (lock keys that can have one) in one
// pipeline, and returns the descriptions found by lock key, each bounded by
// companions.MaxValueBytes. The scan never reads fence values: only inspect shows them.
func ReadHolderValues(ctx context.Context, c redis.Cmdable, keys []string) (map[string]string, error) {
	found := make(map[string]string, len(keys))
	var firstErr error
	for i, v := range companions.Read(ctx, c, keys, false) {
		switch {
		case v.HasHolder && v.Holder != "":
			found[keys[i]] = v.Holder
		case v.HolderErr != nil && firstErr == nil:
			firstErr = v.HolderErr
		}
	}
	return found, firstErr
}

// holderCandidates lists, once each, the whole key names in every namespace's top-K lists that
// can have a holder key.
func (f *Run) holderCandidates() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var keys []string
	for _, st := range f.ns {
		for _, list := range [][]KeyInfo{st.top.Items(), st.noTTLTop.Items()} {
			for _, k := range list {
				if _, ok := HolderKeyOf(k.Key); ok && !k.Cut && !seen[k.Key] {
					seen[k.Key] = true
					keys = append(keys, k.Key)
				}
			}
		}
	}
	return keys
}

func (f *Run) setHolders(holders map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holders = holders
}

// withHolders sets the Holder of each listed key that has one; f.mu is held.
func (f *Run) withHolders(keys []KeyInfo) []KeyInfo {
	for i, k := range keys {
		if !k.Cut {
			keys[i].Holder = f.holders[k.Key]
		}
	}
	return keys
}

// HolderKeyOf is lockKey's holder key, and ok false for a key lease refuses to record a holder
// for (a '}' without a valid hash tag: its holder key could not share the lock's slot).
func HolderKeyOf(lockKey string) (key string, ok bool) {
	if !lockkeys.SameSlot(lockKey) {
		return "", false
	}
	return lockkeys.Holder(lockKey), true
}
