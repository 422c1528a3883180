package index

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockwatch/lockwatch/collectors/internal/keyspace"
)

// errNotificationsOff is a build's error with --scan.feed=notifications on a server whose
// CONFIG GET shows that it does not publish every event the index needs: the build is retried
// (the walk serves meanwhile), so an operator who turns them on needs no restart.
var errNotificationsOff = errors.New("--scan.feed=notifications: the server does not publish the keyspace events the index needs")

// feedState is what a node remembers of its feed between builds.
type feedState struct {
	source FeedKind // of the feed opened last; FeedKindNone before the first
	// configRefused: CONFIG GET was refused once. It is not asked again: each refusal is an
	// entry in the server's ACL LOG.
	configRefused bool
}

// openFeed opens the node's change feed from the source Options.Feed chooses. With FeedKindAuto, a
// notifications subscription the ACL refuses falls back to tracking.
func (n *Node) openFeed(ctx context.Context) (*ChangeFeed, error) {
	admit := func(k string) bool { return n.maskOf(k) != 0 }
	source, support, err := n.chooseFeed(ctx)
	if err != nil {
		return nil, err
	}
	var feed *ChangeFeed
	if source == FeedKindNotifications {
		feed, err = n.openNotificationFeed(ctx, admit, support)
		if err != nil && isRefusal(err) && n.Opts.Feed == FeedKindAuto {
			n.Opts.Logger.Info("lock key index: keyspace notifications refused; following client tracking", "err", err, "addr", n.client.Options().Addr)
			source = FeedKindTracking
		}
	}
	if source == FeedKindTracking {
		feed, err = OpenChangeFeed(ctx, n.client.Options(), n.prefixes, admit)
	}
	if err == nil {
		n.noteFeedSource(source, support)
	}
	return feed, err
}

// chooseFeed returns the source to open and, for notifications, what CONFIG GET showed (nil when
// it was refused: the operator is trusted, and nothing is re-read). An error (no answer, or
// notifications demanded where the server shows them insufficient) fails the build.
func (n *Node) chooseFeed(ctx context.Context) (FeedKind, *keyspace.Support, error) {
	want := n.Opts.Feed
	n.mu.Lock()
	refused := n.feedState.configRefused
	n.mu.Unlock()
	if want == FeedKindTracking || refused && want == FeedKindAuto {
		return FeedKindTracking, nil, nil
	}
	if refused {
		return FeedKindNotifications, nil, nil
	}
	support, err := keyspace.Probe(ctx, n.client)
	switch {
	case errors.Is(err, keyspace.ErrConfigRefused):
		n.mu.Lock()
		n.feedState.configRefused = true
		n.mu.Unlock()
		return n.chooseFeed(ctx)
	case err != nil:
		return FeedKindNone, nil, err
	case support.Sufficient():
		return FeedKindNotifications, &support, nil
	case want == FeedKindNotifications:
		return FeedKindNone, nil, fmt.Errorf("%w: %s", errNotificationsOff, support.Shortfall())
	}
	return FeedKindTracking, nil, nil
}

// noteFeedSource records the source of the feed just opened, and logs it when it is not the one
// before (the first feed, or auto moving between the two).
func (n *Node) noteFeedSource(source FeedKind, support *keyspace.Support) {
	n.mu.Lock()
	changed := n.feedState.source != source
	n.feedState.source = source
	n.mu.Unlock()
	if !changed {
		return
	}
	addr := n.client.Options().Addr
	switch {
	case source == FeedKindTracking:
		n.Opts.Logger.Info("lock key index: following client tracking", "addr", addr)
	case support == nil:
		n.Opts.Logger.Info("lock key index: following keyspace notifications; CONFIG GET refused, so their setting is trusted, not checked", "addr", addr)
	case !support.Evictions:
		n.Opts.Logger.Info("lock key index: following keyspace notifications; evictions are not published (no e in "+keyspace.Setting+"): an evicted lock is found by the backstop walk", "addr", addr, "setting", support.Value)
	default:
		n.Opts.Logger.Info("lock key index: following keyspace notifications", "addr", addr, "setting", support.Value)
	}
}

// openNotificationFeed subscribes to the keyspace events of the node's prefixes on a
// connection of its own. config is nil where CONFIG GET is refused. A subscription the server
// refuses (an ACL without the channel rule) is a refusal.
func (n *Node) openNotificationFeed(ctx context.Context, admit func(string) bool, support *keyspace.Support) (*ChangeFeed, error) {
	sub, err := keyspace.Subscribe(ctx, n.client.Options(), n.prefixes, keyspace.DefaultMaxPending)
	if errors.Is(err, keyspace.ErrSubscribeRefused) {
		rules := keyspace.ChannelRules(n.client.Options().DB, n.prefixes)
		return nil, &TrackingRefusedError{Err: fmt.Errorf("%w; the notifications feed needs +psubscribe +ping %s", err, strings.Join(rules, " "))}
	}
	if err != nil {
		return nil, Refusal(err)
	}
	var config keyspace.ConfigReader
	if support != nil {
		config = n.client
	}
	return NewNotificationFeed(sub, config, admit, &n.clock), nil
}
