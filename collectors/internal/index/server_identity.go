package index

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ServerIdentity is what tells that the server behind the address is no longer the one the
// index was built from, or that its data moved without a change-feed message.
type ServerIdentity struct {
	RunID    string
	Role     string
	Commands CommandStats // what ran: SWAPDB and flushes, which some feeds do not report
	Major    int          // redis_version's major number
	// Slots is, on a cluster master, the slots it serves by its own CLUSTER SLOTS reply: a
	// slot that moves in or out changes the keys it holds by MIGRATE. CLUSTER SLOTS rather than
	// the node's CLUSTER NODES line, because the walk's ACL already grants it; the node is found
	// in it by the address it was dialled at (the one the slot map gave), and when it is not
	// there (an address translated on the way, or no slot left), Slots is the whole map, so
	// that any move resyncs it.
	Slots string
}

// Changed returns the resync reason for a change from id to now, or "".
func (id ServerIdentity) Changed(now ServerIdentity) string {
	switch {
	case id.RunID != now.RunID:
		return ResyncRestart
	case id.Role != now.Role:
		return ResyncRole
	case id.Slots != now.Slots:
		return ResyncSlotsMoved
	}
	return dataChangeResync(id.Commands.DatasetChange(now.Commands))
}

// dataChangeResync is the resync reason of a change of the data seen in the command counts, or
// "" for none.
func dataChangeResync(c DataChange) string {
	switch c {
	case DataSwapped:
		return ResyncSwapDB
	case DataFlushed:
		return ResyncFlush
	case CountsReset:
		return ResyncStatsReset
	}
	return ""
}

// IdentityOf is the identity an INFO reply of the server, replication and commandstats
// sections tells; a cluster master's slots are read apart (SlotMap).
func IdentityOf(info string) ServerIdentity {
	id := ServerIdentity{
		RunID:    InfoField(info, "run_id"),
		Role:     InfoField(info, "role"),
		Commands: ParseCommandStats(info),
	}
	id.Major, _ = strconv.Atoi(strings.SplitN(InfoField(info, "redis_version"), ".", 2)[0])
	return id
}

// SlotMap is the ranges of a CLUSTER SLOTS reply whose master is at self, in slot order, or
// every range with its master's id when none is.
func SlotMap(ranges []redis.ClusterSlot, self string) string {
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

// InfoField is the value of "name:value" in an INFO reply.
func InfoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), name+":"); ok {
			return v
		}
	}
	return ""
}
