package index

import (
	"strconv"
	"strings"
)

// CommandStats is INFO commandstats: per command, the counts since the server started or since
// the last CONFIG RESETSTAT, which zeroes them all. The index reads in them the commands that
// replace a database's data without a change-feed message: SWAPDB, for which client tracking
// and keyspace notifications send nothing, and FLUSHDB and FLUSHALL, for which keyspace
// notifications send nothing. The index's check of the server's identity reads them, so that
// every kind of feed gets it.
type CommandStats map[string]CommandStat

// CommandStat is one command's line. Every field only grows until the next CONFIG RESETSTAT.
type CommandStat struct{ calls, usec, rejected, failed int64 }

// ParseCommandStats reads the "cmdstat_NAME:calls=N,usec=N,..." lines of an INFO commandstats
// reply; fields a server does not send (rejected and failed calls, before Redis 6.2) stay 0.
func ParseCommandStats(info string) CommandStats {
	stats := CommandStats{}
	for line := range strings.SplitSeq(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if name, ok = strings.CutPrefix(name, "cmdstat_"); !ok {
			continue
		}
		var st CommandStat
		for field := range strings.SplitSeq(fields, ",") {
			key, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch key {
			case "calls":
				st.calls = n
			case "usec":
				st.usec = n
			case "rejected_calls":
				st.rejected = n
			case "failed_calls":
				st.failed = n
			}
		}
		stats[name] = st
	}
	return stats
}

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
	return now[command].calls > prev[command].calls
}

// resetSince reports whether the counts were zeroed since prev: some command prev counted has
// fewer calls, microseconds, rejected or failed calls now, or is gone. A reset goes unseen only
// if, before the next reading, other clients run every command prev counted as often and for as
// long as it had run when prev was read.
func (now CommandStats) resetSince(prev CommandStats) bool {
	for name, p := range prev {
		c := now[name]
		if c.calls < p.calls || c.usec < p.usec || c.rejected < p.rejected || c.failed < p.failed {
			return true
		}
	}
	return false
}
