package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// FeedInterval is how often the feed loop reads the tracking connection (a TIME round trip) and
// re-reads the keys it named. It bounds how long pushes wait in the server's output buffer, and
// spreads the re-reads over the scrape interval so that a scrape finds few left to do.
const FeedInterval = 100 * time.Millisecond

// feedCommandTimeout bounds the feed loop's round trips, so that a Redis that stopped answering
// holds the index's lock no longer than that: scrapes meanwhile wait for it until their deadline.
const feedCommandTimeout = 5 * time.Second

// syncLock is a mutex that a scrape can stop waiting for at its deadline.
type syncLock chan struct{}

func (l syncLock) Lock()   { l <- struct{}{} }
func (l syncLock) Unlock() { <-l }

// lockCtx takes the lock, or reports false when ctx ends first.
func (l syncLock) lockCtx(ctx context.Context) bool {
	select {
	case l <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// identityEvery is how many feed ticks pass between checks of the server's identity (run id,
// role, command counts) outside scrapes; a scrape always checks.
const identityEvery = 10

// buildTimeout bounds one build of the index (a walk of the node's keyspace).
const buildTimeout = time.Hour

// Node keeps the index of one Redis node (a single server, or the master behind Sentinel)
// current: a feed loop that follows the change feed, and a resync (a new feed and a new walk)
// whenever the feed could have missed something. Its parts: the feed follower (feedFollower),
// the builder (buildState) and what a scrape reads beside the index (scrapeServer), each
// documenting which of the node's two locks guards which of its fields.
type Node struct {
	Env        // what the Scanner that started the node gives it: options, budget, walker
	client     *redis.Client
	namespaces []walk.Namespace // the indexed namespaces (Opts.Namespaces); bit b of a mask is namespaces[b]
	cls        *walk.Classifier
	prefixes   []string
	clock      ServerClock
	noHolder   atomic.Bool       // the holder read was refused: the lifecycle goes on without holders
	lifeSrc    *lifecycle.Source // the lifecycle counts of the node's re-reads, until settleLifecycle

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// syncMu serializes the feed loop's drains, a scrape's drain and aggregation, and the swap
	// of a new index; idx and ident, and the feed follower's feed state, are read and written
	// under it. A scrape can stop waiting for it at its deadline.
	syncMu syncLock
	idx    *KeyIndex      // the last complete index; nil before the first build
	ident  ServerIdentity // of the server idx was built from

	// mu guards the build state, the scrape's counts and the follower's redirected flag: short
	// sections, never held across a Redis round trip. Taken after syncMu when both are held.
	mu sync.Mutex

	feedFollower
	buildState
	scrapeServer

	// clusterMaster marks one master of a Redis Cluster: its identity includes the slots it
	// serves, and it serves scrapes only while its role is master. late marks a master that
	// joined after start (a failover): scrapes do not wait for its first build.
	clusterMaster, late bool
}

func NewNode(env Env, client *redis.Client, prefixes []string) *Node {
	n := makeIndexNode(env, client, prefixes)
	go n.run()
	return n
}

func makeIndexNode(env Env, client *redis.Client, prefixes []string) *Node {
	namespaces := env.Opts.Namespaces
	n := &Node{
		Env: env, client: client, namespaces: namespaces, cls: walk.NewClassifier(namespaces), prefixes: prefixes, lifeSrc: env.Life.NewSource(),
		done: make(chan struct{}), syncMu: make(syncLock, 1),
		buildState: buildState{tried: make(chan struct{}), resyncs: map[string]int64{}},
	}
	n.ctx, n.cancel = context.WithCancel(env.Base)
	return n
}

// Counts is the node's share of the index figures a Result carries.
func (n *Node) Counts() Counts {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Counts{Resyncs: maps.Clone(n.resyncs), Entries: n.entries, Corrections: n.corrections, Backstops: n.backstops}
}

func (n *Node) Close() {
	n.cancel()
	<-n.done
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if n.feed != nil {
		n.feed.Close()
		n.feed = nil
	}
	n.Budget.Release(n)
}

// run builds the index, follows the feed, and resyncs when the feed is lost, until the Scanner
// closes or the server refuses tracking.
func (n *Node) run() {
	defer close(n.done)
	backoff := time.Second
	first := true
	for n.ctx.Err() == nil {
		err := n.build()
		if first {
			close(n.tried)
			first = false
		}
		var refused *TrackingRefusedError
		if errors.As(err, &refused) {
			n.refuse(err)
			return
		}
		var lost *errFeedLost
		if errors.As(err, &lost) && lost.reason == ResyncSlotsMoved {
			// A slot began to move during the build: build again once it has moved.
			n.awaitMoveEnd()
			continue
		}
		if err != nil {
			n.buildFailed(err, backoff)
			select {
			case <-n.ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		bctx, stopBackstop := context.WithCancel(n.ctx)
		backstopDone := make(chan struct{})
		go func() {
			defer close(backstopDone)
			n.backstopLoop(bctx)
		}()
		reason := n.follow()
		stopBackstop()
		<-backstopDone
		if reason == "" {
			return
		}
		n.mu.Lock()
		n.current = false
		n.lost = reason
		n.resyncs[reason]++
		n.mu.Unlock()
		n.Opts.Logger.Info("lock key index: resync", "reason", reason, "addr", n.client.Options().Addr)
		if reason == ResyncSlotsMoved {
			n.awaitMoveEnd()
		}
	}
}

// DefaultMoveWaitMax bounds how long a master whose slots are moving waits for the move to end
// before it builds anyway: a move an operator abandoned (CLUSTER SETSLOT STABLE) changes no slot.
const DefaultMoveWaitMax = time.Minute

// awaitMoveEnd waits, after a re-read was redirected, until the slots this master serves differ
// from those of the index's build (or its identity changed otherwise), Options.moveWaitMax passed, or
// the Scanner closed. A re-read is redirected while a slot migrates: its keys leave or arrive
// by MIGRATE, and the slot changes hands only at the end. A build begun meanwhile would be
// followed by another once the slot changed hands, so a reshard would cost the master two walks
// (or more: one per redirect) where one after the move is enough. Scrapes meanwhile walk the
// master. The feed is closed: nothing follows it until the build opens a new one.
func (n *Node) awaitMoveEnd() {
	n.syncMu.Lock()
	if n.feed != nil {
		n.feed.Close()
		n.feed = nil
	}
	built := n.ident
	n.syncMu.Unlock()
	t := time.NewTicker(FeedInterval)
	defer t.Stop()
	until := time.Now().Add(n.Opts.MoveWaitMax)
	for time.Now().Before(until) {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(n.ctx, feedCommandTimeout)
		ident, _, _, err := n.readIdentity(ctx, false)
		cancel()
		if err == nil && built.Changed(ident) != "" {
			return
		}
	}
}

// BuildFailedMessage is logged, at WARN, when the builds of a node's index start failing.
const BuildFailedMessage = "lock key index: build failed; walking the keyspace on every scrape until a build succeeds"

// buildFailed records a failed build: scrapes walk (index_unavailable) until a build succeeds,
// and the first failure of a run of them is logged at WARN, the retries at DEBUG. The index of
// a failed build is not served: it may never have been current, or be behind by the backoff.
// The budget is charged with the index kept (the build's charge was its own).
func (n *Node) buildFailed(err error, retryIn time.Duration) {
	n.mu.Lock()
	first := !n.failing
	n.failing = true
	n.mu.Unlock()
	n.syncMu.Lock()
	if n.idx != nil {
		n.keepWithinBudget(n.idx)
	} else {
		n.Budget.Release(n)
	}
	n.syncMu.Unlock()
	if n.ctx.Err() != nil {
		return
	}
	log := n.Opts.Logger.Debug
	if first {
		log = n.Opts.Logger.Warn
	}
	log(BuildFailedMessage, "err", err, "addr", n.client.Options().Addr, "retry_in", retryIn)
}

func (n *Node) refuse(err error) {
	// The lines are written before the refusal is visible to scrapes, so that whoever sees a
	// namespace walked for it finds the reason in the log already.
	for _, ns := range n.namespaces {
		n.Opts.Logger.Warn(fmt.Sprintf("namespace %s: %s: walking the keyspace on every scrape", ns.Name, TrackingRefusedText),
			"lock_namespace", ns.Name, "err", err)
	}
	n.mu.Lock()
	n.refused = err
	n.mu.Unlock()
}

// build opens a change feed and builds an index with one walk. Tracking is on before the
// walk starts, so a key changed behind the walk's cursor is named by the feed and re-read after.
func (n *Node) build() error {
	n.settleLifecycle(n.lostReason())
	n.syncMu.Lock()
	if n.feed != nil {
		n.feed.Close()
		n.feed = nil
	}
	n.syncMu.Unlock()
	began := time.Now()
	n.setBuildStart(began)
	defer n.setBuildStart(time.Time{})
	ctx, cancel := context.WithTimeout(n.ctx, buildTimeout)
	defer cancel()
	feed, err := n.openFeed(ctx)
	if err != nil {
		return err
	}
	ident, _, _, err := n.readIdentity(ctx, false)
	if err != nil {
		feed.Close()
		return RefusedGrant(err)
	}
	n.mu.Lock()
	n.absolute = ident.Major >= 7
	absolute := n.absolute
	n.mu.Unlock()

	// The first build's walk stays shareable until the index is installed.
	defer n.setBuilding(nil)
	b, included, truncated, err := n.buildWalk(ctx, absolute)
	if err != nil {
		feed.Close()
		return err
	}
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if err := n.install(ctx, b.Result(), truncated, feed, ident); err != nil {
		return err
	}
	n.markBuilt(began, included)
	return nil
}

// setBuildStart records when the build under way began; zero between builds.
func (n *Node) setBuildStart(began time.Time) {
	n.mu.Lock()
	n.buildStart = began
	n.mu.Unlock()
}

// setBuilding records the first build's walk while it runs (nil when none runs), for a scrape
// to share. A walk after the first complete build is not shared: the index serves meanwhile.
func (n *Node) setBuilding(f *walk.Run) {
	n.mu.Lock()
	if f == nil || !n.built {
		n.building = f
	}
	n.mu.Unlock()
}

// buildWalk builds an index of the node's keyspace with one walk, held to the key budget. It
// returns the builder, the namespaces the build reads (included: those not sent to the walk as
// it began), and the namespaces whose keys passed the budget during the walk (truncated).
func (n *Node) buildWalk(ctx context.Context, absolute bool) (b *Builder, included uint64, truncated []int, err error) {
	n.syncMu.Lock()
	base := n.idx
	n.syncMu.Unlock()
	b = NewBuilder(&n.clock, absolute, n.namespaces, base, n.syncMu)
	b.ForgetHolds = dataReplaced(n.lostReason())
	b.ChargeTo(n.Budget, n)
	included = ^b.Exclude // namespaces coming back that this build reads
	start := time.Now()
	f := walk.NewRun(ctx, n.Opts.Walk, n.cls, n.Replies, start, start.Add(buildTimeout))
	f.Sink = b
	n.setBuilding(f)
	n.Walker.WalkNode(f, n.client)
	f.PassEnded(time.Now())
	f.Finish(time.Now())
	truncated, err = buildOutcome(f.Final)
	return b, included, truncated, err
}

// buildOutcome judges a build's walk: the namespaces it cut at the key budget (truncated), or
// the error that makes the build fail (a refused grant refuses the index).
func buildOutcome(res *walk.Result) (truncated []int, err error) {
	if !res.Up {
		return nil, RefusedGrant(fmt.Errorf("index build: %w", res.Err))
	}
	for i, ns := range res.Namespaces {
		switch {
		case ns.Truncated:
			truncated = append(truncated, i)
		case ns.Err != nil:
			return nil, RefusedGrant(fmt.Errorf("index build: %w", ns.Err))
		case !ns.Complete:
			return nil, fmt.Errorf("index build: namespace %q: walk cut short", ns.Namespace.Name)
		}
	}
	return truncated, nil
}

// install makes idx, built from the server ident, the node's index following feed, and drains
// the feed once: the changes made during the build are re-read. It returns errFeedLost when
// the feed was lost meanwhile (the feed is closed). syncMu is held.
func (n *Node) install(ctx context.Context, idx *KeyIndex, truncated []int, feed *ChangeFeed, ident ServerIdentity) error {
	for _, i := range truncated {
		n.Budget.Overflow(i)
	}
	n.keepWithinBudget(idx)
	n.feed, n.idx, n.ident, n.unreadable, n.absentHolds = feed, idx, ident, nil, nil
	if reason, err := n.drain(ctx); reason != "" || err != nil {
		// Lost already: the index is complete but may be behind; the next round builds afresh.
		n.feed.Close()
		n.feed = nil
		if err == nil {
			err = &errFeedLost{reason: reason}
		}
		return err
	}
	return nil
}

// markBuilt records a build begun at began that read the namespaces in included: the index is
// current and served. A namespace that came back under the key budget after the build began
// was not read by it: the index is marked behind, and the feed loop builds again. syncMu is
// held.
func (n *Node) markBuilt(began time.Time, included uint64) {
	n.mu.Lock()
	n.current, n.currentAt, n.lost, n.built = true, time.Now(), "", true
	n.buildTook = time.Since(began)
	n.endSlotMove()
	recovered := n.failing
	n.failing = false
	n.returning &= ^included
	again := n.returning != 0
	n.mu.Unlock()
	if recovered {
		n.Opts.Logger.Info("lock key index: built; serving from the index again", "addr", n.client.Options().Addr)
	}
	if again {
		n.lose(ResyncKeyBudget)
	}
}

// errFeedLost is a build's error when its feed was lost before the build ended.
type errFeedLost struct{ reason string }

func (e *errFeedLost) Error() string { return "feed lost during the build: " + e.reason }

// follow drains the feed every FeedInterval until it is lost, and returns why ("" when the
// Scanner closed, or a scrape found a grant the index needs revoked: the node is refused).
func (n *Node) follow() string {
	t := time.NewTicker(FeedInterval)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-n.ctx.Done():
			return ""
		case <-t.C:
		}
		reason, refused := n.followTick(tick)
		if refused {
			return ""
		}
		if reason != "" && n.ctx.Err() == nil {
			return reason
		}
	}
}

// followTick drains the feed once and, every identityEvery ticks, checks the server's identity.
// It returns a resync reason, or refused true when the index is refused: by a scrape since the
// build, or by this drain, which met a command the ACL does not grant.
func (n *Node) followTick(tick int) (reason string, refused bool) {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	n.mu.Lock()
	refused = n.refused != nil
	n.mu.Unlock()
	if refused {
		return "", true
	}
	ctx, cancel := context.WithTimeout(n.ctx, feedCommandTimeout)
	defer cancel()
	reason = n.lostReason()
	if reason == "" {
		var err error
		// A Redis that does not answer is the scrape's to report.
		if reason, err = n.drain(ctx); isRefusal(err) {
			n.refuseIndex(err)
			return "", true
		}
	}
	if reason == "" && tick%identityEvery == 0 {
		if ident, _, _, err := n.readIdentity(ctx, false); err == nil {
			reason = n.checkIdentity(ident)
			n.settleLifecycle(reason)
		}
	}
	if reason == "" {
		n.mu.Lock()
		n.currentAt = time.Now()
		n.mu.Unlock()
	}
	return reason, false
}

func (n *Node) lostReason() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lost
}

// lose marks the index behind for reason; the feed loop resyncs. syncMu is held.
func (n *Node) lose(reason string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.current {
		n.current = false
		n.lost = reason
	}
}
