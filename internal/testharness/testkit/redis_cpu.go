package testkit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCPU is the CPU time (user + system) the Redis server behind c has used, from INFO cpu:
// the difference of two readings is what the server spent between them, which other processes
// on the machine disturb far less than wall time.
func RedisCPU(ctx context.Context, c *redis.Client) (time.Duration, error) {
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for line := range strings.SplitSeq(info, "\r\n") {
		name, v, ok := strings.Cut(line, ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu %q: %w", line, err)
			}
			total += secs
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}
