package index

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkIdentity returns the resync reason for a change from the identity the index follows to
// ident, just read, or "". On a notifications feed, any CONFIG SET (Redis 7's
// cmdstat_config|set) is one. When nothing changed, ident becomes the reference: command counts
// only grow between resets, so the latest reading is the one a reset falls furthest below.
// syncMu is held.
func (n *Node) checkIdentity(ident ServerIdentity) string {
	reason := n.ident.Changed(ident)
	if reason == "" && ident.Commands.RanSince(n.ident.Commands, "config|set") && n.followsNotifications() {
		// A CONFIG SET may have switched notifications off and on again between two readings
		// of the setting: what was published meanwhile is lost.
		reason = ResyncNotificationsOff
	}
	if reason == "" {
		n.ident = ident
	}
	return reason
}

// readIdentity reads the server's identity and TIME in one pipeline, sets the clock offset, and,
// with withKeyspace (a scrape's reading, which reports it), returns the keyspace size (DBSIZE);
// the other readings leave DBSIZE out and return 0.
//
// now is the server's TIME in milliseconds: a scrape aggregates the index as of that instant, so
// its TTLs are what PTTL would have answered then, without the error of a clock-offset estimate.
func (n *Node) readIdentity(ctx context.Context, withKeyspace bool) (id ServerIdentity, keyspace, now int64, err error) {
	id, keyspace, now, err = n.readIdentityOnce(ctx, n.knownAbsolute(), withKeyspace)
	var rerr redis.Error
	if errors.As(err, &rerr) && n.knownAbsolute() && !isRefusal(RefusedGrant(err)) {
		// A server before 7 answers an INFO of several sections with a syntax error: the one
		// the index was built from was replaced by an older one at the same address.
		return n.readIdentityOnce(ctx, false, withKeyspace)
	}
	return id, keyspace, now, err
}

// readIdentityOnce is readIdentity's pipeline. manySections reads the three INFO sections in one
// INFO, as Redis 7 and later take them; servers before 7 take one section at a time.
func (n *Node) readIdentityOnce(ctx context.Context, manySections, withKeyspace bool) (id ServerIdentity, keyspace, now int64, err error) {
	pipe := n.client.Pipeline()
	var infos []*redis.StringCmd
	if manySections {
		infos = append(infos, pipe.Info(ctx, "server", "replication", "commandstats"))
	} else {
		infos = append(infos, pipe.Info(ctx, "server"), pipe.Info(ctx, "replication"), pipe.Info(ctx, "commandstats"))
	}
	tm := pipe.Time(ctx)
	var size *redis.IntCmd
	if withKeyspace {
		size = pipe.DBSize(ctx)
	}
	var slots *redis.ClusterSlotsCmd
	if n.clusterMaster {
		slots = pipe.ClusterSlots(ctx)
	}
	sent := time.Now()
	if _, err := pipe.Exec(ctx); err != nil {
		return ServerIdentity{}, 0, 0, err
	}
	received := time.Now()
	n.clock.Set(tm.Val().UnixMilli(), sent, received)
	n.Replies.Mark(n.client.Options().Addr, received)
	var info strings.Builder
	for _, cmd := range infos {
		info.WriteString(cmd.Val())
	}
	id = IdentityOf(info.String())
	if slots != nil {
		id.Slots = SlotMap(slots.Val(), n.client.Options().Addr)
	}
	if size != nil {
		keyspace = size.Val()
	}
	return id, keyspace, tm.Val().UnixMilli(), nil
}

// knownAbsolute reports whether the index was built from Redis 7 or later.
func (n *Node) knownAbsolute() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.absolute
}
