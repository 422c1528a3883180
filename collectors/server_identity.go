package collectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/redis/go-redis/v9"
)

// serverIdentity is what tells that the server behind the address is no longer the one the
// index was built from, or that its data moved without a change-feed message.
type serverIdentity struct {
	runID    string
	role     string
	commands index.CommandStats // what ran: SWAPDB and flushes, which some feeds do not report
	major    int                // redis_version's major number
	// slots is, on a cluster master, the slots it serves by its own CLUSTER SLOTS reply: a
	// slot that moves in or out changes the keys it holds by MIGRATE. CLUSTER SLOTS rather than
	// the node's CLUSTER NODES line, because the walk's ACL already grants it; the node is found
	// in it by the address it was dialled at (the one the slot map gave), and when it is not
	// there (an address translated on the way, or no slot left), slots is the whole map, so
	// that any move resyncs it.
	slots string
}

// changed returns the resync reason for a change from id to now, or "".
func (id serverIdentity) changed(now serverIdentity) string {
	switch {
	case id.runID != now.runID:
		return index.ResyncRestart
	case id.role != now.role:
		return index.ResyncRole
	case id.slots != now.slots:
		return index.ResyncSlotsMoved
	}
	return dataChangeResync(id.commands.DatasetChange(now.commands))
}

// dataChangeResync is the resync reason of a change of the data seen in the command counts, or
// "" for none.
func dataChangeResync(c index.DataChange) string {
	switch c {
	case index.DataSwapped:
		return index.ResyncSwapDB
	case index.DataFlushed:
		return index.ResyncFlush
	case index.CountsReset:
		return index.ResyncStatsReset
	}
	return ""
}

// checkIdentity returns the resync reason for a change from the identity the index follows to
// ident, just read, or "". On a notifications feed, any CONFIG SET (Redis 7's
// cmdstat_config|set) is one. When nothing changed, ident becomes the reference: command counts
// only grow between resets, so the latest reading is the one a reset falls furthest below.
// syncMu is held.
func (n *indexNode) checkIdentity(ident serverIdentity) string {
	reason := n.ident.changed(ident)
	if reason == "" && ident.commands.RanSince(n.ident.commands, "config|set") && n.followsNotifications() {
		// A CONFIG SET may have switched notifications off and on again between two readings
		// of the setting: what was published meanwhile is lost.
		reason = index.ResyncNotificationsOff
	}
	if reason == "" {
		n.ident = ident
	}
	return reason
}

// readIdentity reads the server's identity and TIME in one pipeline, sets the clock offset, and
// returns the keyspace size (DBSIZE) too.
//
// now is the server's TIME in milliseconds: a scrape aggregates the index as of that instant, so
// its TTLs are what PTTL would have answered then, without the error of a clock-offset estimate.
func (n *indexNode) readIdentity(ctx context.Context) (id serverIdentity, keyspace, now int64, err error) {
	id, keyspace, now, err = n.readIdentityOnce(ctx, n.knownAbsolute())
	var rerr redis.Error
	if errors.As(err, &rerr) && n.knownAbsolute() && !isRefusal(index.RefusedGrant(err)) {
		// A server before 7 answers an INFO of several sections with a syntax error: the one
		// the index was built from was replaced by an older one at the same address.
		return n.readIdentityOnce(ctx, false)
	}
	return id, keyspace, now, err
}

// readIdentityOnce is readIdentity's pipeline. manySections reads the three INFO sections in one
// INFO, as Redis 7 and later take them; servers before 7 take one section at a time.
func (n *indexNode) readIdentityOnce(ctx context.Context, manySections bool) (id serverIdentity, keyspace, now int64, err error) {
	pipe := n.client.Pipeline()
	var infos []*redis.StringCmd
	if manySections {
		infos = append(infos, pipe.Info(ctx, "server", "replication", "commandstats"))
	} else {
		infos = append(infos, pipe.Info(ctx, "server"), pipe.Info(ctx, "replication"), pipe.Info(ctx, "commandstats"))
	}
	tm := pipe.Time(ctx)
	size := pipe.DBSize(ctx)
	var slots *redis.ClusterSlotsCmd
	if n.clusterMaster {
		slots = pipe.ClusterSlots(ctx)
	}
	sent := time.Now()
	if _, err := pipe.Exec(ctx); err != nil {
		return serverIdentity{}, 0, 0, err
	}
	received := time.Now()
	n.clock.Set(tm.Val().UnixMilli(), sent, received)
	n.replies.Mark(n.client.Options().Addr, received)
	var info strings.Builder
	for _, cmd := range infos {
		info.WriteString(cmd.Val())
	}
	id = serverIdentity{
		runID:    infoField(info.String(), "run_id"),
		role:     infoField(info.String(), "role"),
		commands: index.ParseCommandStats(info.String()),
	}
	id.major, _ = strconv.Atoi(strings.SplitN(infoField(info.String(), "redis_version"), ".", 2)[0])
	if slots != nil {
		id.slots = slotMap(slots.Val(), n.client.Options().Addr)
	}
	return id, size.Val(), tm.Val().UnixMilli(), nil
}

// knownAbsolute reports whether the index was built from Redis 7 or later.
func (n *indexNode) knownAbsolute() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.absolute
}

// slotMap is the ranges of a CLUSTER SLOTS reply whose master is at self, in slot order, or
// every range with its master's id when none is.
func slotMap(ranges []redis.ClusterSlot, self string) string {
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b redis.ClusterSlot) int { return a.Start - b.Start })
	master := func(r redis.ClusterSlot) redis.ClusterNode {
		if len(r.Nodes) == 0 {
			return redis.ClusterNode{}
		}
		return r.Nodes[0]
	}
	var own, all strings.Builder
	for _, r := range ranges {
		m := master(r)
		fmt.Fprintf(&all, "%d-%d:%s ", r.Start, r.End, m.ID)
		if m.Addr == self {
			fmt.Fprintf(&own, "%d-%d ", r.Start, r.End)
		}
	}
	if own.Len() > 0 {
		return "own " + own.String()
	}
	return "all " + all.String()
}

// infoField is the value of "name:value" in an INFO reply.
func infoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), name+":"); ok {
			return v
		}
	}
	return ""
}
