package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ioCounts are Redis's socket reads and writes (INFO stats total_reads_processed and
// total_writes_processed): the work of a window that no command's execution time holds, such
// as writing a feed's message to its connection after each lock write.
type ioCounts struct {
	reads, writes int64
}

func readIOCounts(ctx context.Context, admin *redis.Client) (ioCounts, error) {
	info, err := admin.Info(ctx, "stats").Result()
	if err != nil {
		return ioCounts{}, err
	}
	var c ioCounts
	for line := range strings.SplitSeq(info, "\r\n") {
		name, value, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "total_reads_processed":
			c.reads = n
		case "total_writes_processed":
			c.writes = n
		}
	}
	return c, nil
}

func (c ioCounts) plus(o ioCounts) ioCounts  { return ioCounts{c.reads + o.reads, c.writes + o.writes} }
func (c ioCounts) minus(o ioCounts) ioCounts { return ioCounts{c.reads - o.reads, c.writes - o.writes} }
