package collectors

import (
	"strconv"
	"strings"
)

// commandStats is INFO commandstats: per command, the counts since the server started or since
// the last CONFIG RESETSTAT, which zeroes them all. The index reads in them the commands that
// replace a database's data without a change-feed message: SWAPDB, for which client tracking
// and keyspace notifications send nothing, and FLUSHDB and FLUSHALL, for which keyspace
// notifications send nothing. The check lives here, beside the server's identity, so that every
// kind of feed gets it.
type commandStats map[string]commandStat

// commandStat is one command's line. Every field only grows until the next CONFIG RESETSTAT.
type commandStat struct{ calls, usec, rejected, failed int64 }

// parseCommandStats reads the "cmdstat_NAME:calls=N,usec=N,..." lines of an INFO commandstats
// reply; fields a server does not send (rejected and failed calls, before Redis 6.2) stay 0.
func parseCommandStats(info string) commandStats {
	stats := commandStats{}
	for line := range strings.SplitSeq(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if name, ok = strings.CutPrefix(name, "cmdstat_"); !ok {
			continue
		}
		var st commandStat
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

// dataChange is what replaced a database's data between two readings of the command counts.
type dataChange uint8

const (
	noDataChange dataChange = iota
	dataSwapped             // a SWAPDB ran
	dataFlushed             // a FLUSHDB or FLUSHALL ran, of any database
	countsReset             // CONFIG RESETSTAT zeroed the counts, behind which either could hide
)

// datasetChange returns what ran between the readings prev and now: a SWAPDB, a flush of any
// database, or a CONFIG RESETSTAT, behind which either could hide (SWAPDB then RESETSTAT in one
// MULTI leaves no SWAPDB count).
func (prev commandStats) datasetChange(now commandStats) dataChange {
	switch {
	case now.ranSince(prev, "swapdb"):
		return dataSwapped
	case now.ranSince(prev, "flushdb"), now.ranSince(prev, "flushall"):
		return dataFlushed
	case now.resetSince(prev):
		return countsReset
	}
	return noDataChange
}

// ranSince reports whether command has more calls than it had in prev.
func (now commandStats) ranSince(prev commandStats, command string) bool {
	return now[command].calls > prev[command].calls
}

// resetSince reports whether the counts were zeroed since prev: some command prev counted has
// fewer calls, microseconds, rejected or failed calls now, or is gone. A reset goes unseen only
// if, before the next reading, other clients run every command prev counted as often and for as
// long as it had run when prev was read.
func (now commandStats) resetSince(prev commandStats) bool {
	for name, p := range prev {
		c := now[name]
		if c.calls < p.calls || c.usec < p.usec || c.rejected < p.rejected || c.failed < p.failed {
			return true
		}
	}
	return false
}
