package index

import "github.com/lockwatch/lockwatch/internal/commandstats"

// CommandStats is INFO commandstats: per command, the counts since the server started or since
// the last CONFIG RESETSTAT, which zeroes them all. The index reads in them the commands that
// replace a database's data without a change-feed message: SWAPDB, for which client tracking
// and keyspace notifications send nothing, and FLUSHDB and FLUSHALL, for which keyspace
// notifications send nothing. The index's check of the server's identity reads them, so that
// every kind of feed gets it.
type CommandStats commandstats.Stats

// ParseCommandStats reads an INFO commandstats reply.
func ParseCommandStats(info string) CommandStats { return CommandStats(commandstats.Parse(info)) }

// DataChange is what replaced a database's data between two readings of the command counts.
type DataChange uint8

const (
	NoDataChange DataChange = iota
	DataSwapped             // a SWAPDB ran
	DataFlushed             // a FLUSHDB or FLUSHALL ran, of any database
	CountsReset             // CONFIG RESETSTAT zeroed the counts, behind which either could hide
)

// DatasetChange returns what ran between the readings prev and now: a SWAPDB, a flush of any
// database, or a CONFIG RESETSTAT, behind which either could hide (SWAPDB then RESETSTAT in one
// MULTI leaves no SWAPDB count).
func (prev CommandStats) DatasetChange(now CommandStats) DataChange {
	switch {
	case now.RanSince(prev, "swapdb"):
		return DataSwapped
	case now.RanSince(prev, "flushdb"), now.RanSince(prev, "flushall"):
		return DataFlushed
	case now.resetSince(prev):
		return CountsReset
	}
	return NoDataChange
}

// RanSince reports whether command has more calls than it had in prev.
func (now CommandStats) RanSince(prev CommandStats, command string) bool {
	return now[command].Calls > prev[command].Calls
}

// resetSince reports whether the counts were zeroed since prev: some command prev counted has
// fewer calls, microseconds, rejected or failed calls now, or is gone. A reset goes unseen only
// if, before the next reading, other clients run every command prev counted as often and for as
// long as it had run when prev was read.
func (now CommandStats) resetSince(prev CommandStats) bool {
	for name, p := range prev {
		c := now[name]
		if c.Calls < p.Calls || c.Usec < p.Usec || c.RejectedCalls < p.RejectedCalls || c.FailedCalls < p.FailedCalls {
			return true
		}
	}
	return false
}
