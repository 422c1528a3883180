package collectors

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// identityOf is the identity an INFO reply of the server, replication and commandstats
// sections tells; a cluster master's slots are read apart (slotMap).
func identityOf(info string) serverIdentity {
	id := serverIdentity{
		runID:    infoField(info, "run_id"),
		role:     infoField(info, "role"),
		commands: index.ParseCommandStats(info),
	}
	id.major, _ = strconv.Atoi(strings.SplitN(infoField(info, "redis_version"), ".", 2)[0])
	return id
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
