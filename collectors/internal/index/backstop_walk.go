package index

import (
	"context"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// backstopLoop runs paced backstop walks while the index follows its feed, each after a rest of
// Options.BackstopEvery counted from the end of the walk before (or from the start of the
// following); ctx ends with the feed (a resync rebuilds the index with a walk anyway).
func (n *Node) backstopLoop(ctx context.Context) {
	if n.Opts.BackstopKeysPerSecond < 0 {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(n.Opts.BackstopEvery):
		}
		n.backstop(ctx)
	}
}

// backstop walks the node's keyspace once, paced, and corrects every index entry the walk reads
// differently from the index: a key the index lacks or holds with another type, membership or
// expiry, and at the end every entry the walk never saw (a key gone without a feed message). Each
// correction is counted: with a working feed there are none, so a non-zero rate is worth an alert.
func (n *Node) backstop(ctx context.Context) {
	idx := n.beginBackstop()
	if idx == nil {
		return
	}
	defer func() {
		n.syncMu.Lock()
		n.changedSince = nil
		n.syncMu.Unlock()
	}()
	n.mu.Lock()
	absolute := n.absolute
	n.mu.Unlock()

	chk := &backstopCheck{ctx: ctx, n: n, idx: idx, absolute: absolute}
	if !n.backstopWalk(ctx, chk) {
		return
	}
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if n.idx != idx || !chk.drained(ctx) {
		return
	}
	fixed, ok := n.correctUnseen(ctx, idx, absolute)
	if !ok {
		return
	}
	n.countBackstop(chk.fixed + fixed)
}

// beginBackstop starts a new epoch of the node's index and the collection of the keys drains
// re-read from now on (changedSince), and returns the index; nil when no index exists yet.
func (n *Node) beginBackstop() *KeyIndex {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	idx := n.idx
	if idx == nil {
		return nil
	}
	idx.Epoch++
	n.changedSince = map[string]bool{}
	return idx
}

// backstopWalk walks the node's keyspace once, paced, with chk judging each batch. It reports
// whether the walk read every namespace it judges whole: only then may the entries it never saw
// be judged gone.
func (n *Node) backstopWalk(ctx context.Context, chk *backstopCheck) bool {
	opts := n.Opts.Walk
	start := time.Now()
	f := walk.NewRun(ctx, opts, n.cls, n.Replies, start, start.Add(24*time.Hour))
	f.Sink = chk
	f.Pace = time.Duration(float64(time.Second) * float64(opts.BatchSize) / float64(n.Opts.BackstopKeysPerSecond))
	n.Walker.WalkNode(f, n.client)
	f.PassEnded(time.Now())
	f.Finish(time.Now())
	if !f.Final.Up || chk.aborted || ctx.Err() != nil {
		return false
	}
	// A namespace walked for the key budget is not judged: the index holds none of its keys,
	// and the walk reads at most the budget of them.
	over := n.Budget.OverMask()
	for b, ns := range f.Final.Namespaces {
		if over&(1<<b) == 0 && (!ns.Complete || ns.Truncated) {
			return false
		}
	}
	return true
}

// correctUnseen re-reads every entry of idx the backstop walk did not see and returns how many
// the re-read changed or removed; ok is false when the re-read failed (a refused grant refuses
// the index). syncMu is held.
func (n *Node) correctUnseen(ctx context.Context, idx *KeyIndex, absolute bool) (fixed int, ok bool) {
	// An entry of an older epoch was neither seen by the walk (which returns every key present
	// throughout it) nor re-read since it began: it should be gone. Re-read to be sure.
	var unseen []string
	before := map[string]Entry{}
	for k, e := range idx.All() {
		if e.Epoch != idx.Epoch {
			unseen = append(unseen, k)
			before[k] = *e
		}
	}
	if err := n.reread(ctx, idx, unseen); err != nil {
		if isRefusal(err) {
			n.refuseIndex(err)
		}
		return 0, false
	}
	for _, k := range unseen {
		after, ok := idx.Get(k)
		if !ok || Differs(before[k], after, absolute) {
			fixed++
		}
	}
	return fixed, true
}

// countBackstop counts a finished backstop walk and its corrections, and warns when it made
// any. syncMu is held.
func (n *Node) countBackstop(corrections int) {
	n.mu.Lock()
	n.corrections += int64(corrections)
	n.backstops++
	n.mu.Unlock()
	n.judgeFeedByBackstop(corrections)
	if corrections > 0 {
		n.Opts.Logger.Warn("lock key index: the backstop walk corrected entries the change feed had missed", "corrections", corrections)
	}
}

// backstopCheck is the backstop walk's sink: it compares what the walk reads with the index.
type backstopCheck struct {
	ctx      context.Context
	n        *Node
	idx      *KeyIndex
	absolute bool
	fixed    int
	aborted  bool
}

func (c *backstopCheck) ExpireTime() bool { return c.absolute }
func (c *backstopCheck) Now() int64       { return c.n.clock.Now() }

// drained brings the index up to now before a comparison, and reports false when the index is
// no longer following its feed (the walk is then abandoned: a resync walks anyway). syncMu is held.
func (c *backstopCheck) drained(ctx context.Context) bool {
	if c.n.idx != c.idx || c.aborted {
		c.aborted = true
		return false
	}
	reason, err := c.n.drain(ctx)
	if reason != "" {
		c.n.lose(reason)
	}
	if reason != "" || err != nil {
		c.aborted = true
		return false
	}
	return true
}

// add judges one batch (lock keys, and fence keys read for their expiry): after a drain, the
// index holds every change the feed named up to now, so a key the feed has not named since the
// walk began must read as the index says, or the feed missed something.
func (c *backstopCheck) Add(b *walk.Batch, replies []walk.KeyReply, idleKnown bool, at int64) {
	c.n.syncMu.Lock()
	defer c.n.syncMu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, feedCommandTimeout)
	defer cancel()
	if !c.drained(ctx) {
		return
	}
	// A key the feed named since the walk began may have changed after the walk read it: the
	// feed's re-read is the newer, so the walk does not judge it.
	fresh := c.n.changedSince
	st := ReadStamp{At: at, IdleKnown: idleKnown, Absolute: c.absolute, Namespaces: c.n.namespaces}
	for k := range replies {
		key := b.Keys[k]
		if replies[k].Err != nil || fresh[key] {
			continue
		}
		mask := MaskOf(b.NS[b.Off[k]:b.Off[k+1]]) &^ c.n.Budget.OverMask()
		if mask == 0 {
			continue
		}
		old, had := c.idx.Get(key)
		want, keep := EntryOf(mask, &replies[k], st)
		switch {
		case !keep && had:
			c.fixed++
			c.idx.Remove(key)
		case keep && (!had || Differs(old, want, c.absolute)):
			c.fixed++
			want.Epoch = c.idx.Epoch
			if had {
				want.KeepHold(old)
			}
			c.idx.Set(key, want)
			c.n.keepWithinBudget(c.idx)
		case keep:
			old.Epoch = c.idx.Epoch
			c.idx.Set(key, old)
		}
	}
}
