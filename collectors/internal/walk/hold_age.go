package walk

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// queueHolders adds to pipe a GET of the holder key of every key readHolder picks, fence keys
// read for their expiry alone aside (nil where it does not), and, when there is one and the
// batch has no TIME yet, a TIME: the server's clock, against which the holder records'
// acquisition times are aged, so the exporter's clock plays no part.
func (in *Inspector) queueHolders(ctx context.Context, pipe redis.Pipeliner, keys []string) {
	in.holders = in.holders[:0]
	if in.readHolder == nil {
		return
	}
	queued := false
	for j, k := range keys {
		var cmd *redis.StringCmd
		if !in.fences[j] && in.readHolder(k) {
			in.ask(ctx, pipe)
			cmd, queued = pipe.Get(ctx, lockkeys.Holder(k)), true
		}
		in.holders = append(in.holders, cmd)
	}
	if queued && in.now == nil {
		in.now = pipe.Time(ctx)
	}
}

// heldFor sets r's hold age from key j's holder record. A record that is missing, unreadable
// (an ACL without GET on *:holder, a key of another type) or written before lease recorded the
// time leaves the key without one: it is still counted and listed by idle time.
func (in *Inspector) heldFor(j int, r *KeyReply) {
	if in.now == nil || j >= len(in.holders) || in.holders[j] == nil {
		return
	}
	now, err := in.now.Result()
	if err != nil {
		return
	}
	v, err := in.holders[j].Result()
	if err != nil {
		return
	}
	if rec := lockkeys.ParseHolder(v); !rec.Acquired.IsZero() {
		r.Info.Held, r.Info.HasHeld = max(0, now.Sub(rec.Acquired)), true
		r.AcquiredAt = rec.Acquired.UnixMilli()
	}
}

// mergeHeld folds a key's hold age into the namespace's; k.HasHeld must be true.
func (st *nsState) mergeHeld(k KeyInfo) {
	if !st.hasHeld || k.Held > st.maxHeld {
		st.maxHeld, st.hasHeld = k.Held, true
	}
	st.heldTop.Offer(k)
}
