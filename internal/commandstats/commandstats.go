// Package commandstats reads INFO commandstats: per command, the calls and execution time Redis
// has counted since it started or since the last CONFIG RESETSTAT.
package commandstats

import (
	"strconv"
	"strings"
)

// Stats is an INFO commandstats reply by command name ("get", "config|set").
type Stats map[string]Stat

// Stat is one command's line. Every field only grows until the next CONFIG RESETSTAT.
type Stat struct {
	Calls, Usec, RejectedCalls, FailedCalls int64
}

// Parse reads the "cmdstat_NAME:calls=N,usec=N,..." lines of an INFO commandstats reply; fields
// a server does not send (rejected and failed calls, before Redis 6.2) stay 0.
func Parse(info string) Stats {
	stats := Stats{}
	for line := range strings.SplitSeq(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if name, ok = strings.CutPrefix(name, "cmdstat_"); !ok {
			continue
		}
		var st Stat
		for field := range strings.SplitSeq(fields, ",") {
			key, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch key {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			case "rejected_calls":
				st.RejectedCalls = n
			case "failed_calls":
				st.FailedCalls = n
			}
		}
		stats[name] = st
	}
	return stats
}
