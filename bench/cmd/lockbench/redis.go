package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// releaseScript is the compare-and-delete every library runs on release; the ceiling calls it
// by EVALSHA as the libraries do.
const releaseScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`

// ceiling is redis-benchmark's throughput for the commands of one lock cycle at the same
// concurrency: SET NX PX (acquire) and EVALSHA compare-and-delete (release). A cycle needs
// both, one after the other, so its ceiling is 1/(1/set + 1/evalsha) cycles per second.
//
// The pipelined ceiling sends the same commands over one connection, conns deep (-c 1 -P
// conns): what perfect auto-pipelining of conns goroutines onto one connection could reach.
type ceiling struct {
	setRPS, evalRPS           float64
	pipedSetRPS, pipedEvalRPS float64
}

func (c ceiling) cyclesPerSec() float64      { return 1 / (1/c.setRPS + 1/c.evalRPS) }
func (c ceiling) pipedCyclesPerSec() float64 { return 1 / (1/c.pipedSetRPS + 1/c.pipedEvalRPS) }

// measureCeiling runs redis-benchmark twice on the server. For distinct keys each request picks
// a random key (-r); for the contended shape every request names one key, so SET NX fails as
// the libraries' busy attempts do.
func measureCeiling(ctx context.Context, addr string, port int, s shape, conns, requests int) (ceiling, error) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	sha, err := c.ScriptLoad(ctx, releaseScript).Result()
	if err != nil {
		return ceiling{}, fmt.Errorf("SCRIPT LOAD: %w", err)
	}
	key := "ceiling:__rand_int__"
	if s.contends {
		key = "ceiling:contended"
	}
	var out ceiling
	for _, run := range []struct {
		set, eval *float64
		conns     int
		depth     int
	}{
		{&out.setRPS, &out.evalRPS, conns, 1},
		{&out.pipedSetRPS, &out.pipedEvalRPS, 1, conns},
	} {
		common := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-c", strconv.Itoa(run.conns),
			"-P", strconv.Itoa(run.depth), "-n", strconv.Itoa(requests), "-r", "1000000", "--csv"}
		if *run.set, err = redisBenchmark(append(common, "SET", key, "token-0123456789abcdef", "NX", "PX", "10000")); err != nil {
			return ceiling{}, err
		}
		if *run.eval, err = redisBenchmark(append(common, "EVALSHA", sha, "1", key, "token-0123456789abcdef")); err != nil {
			return ceiling{}, err
		}
	}
	return out, c.FlushAll(ctx).Err()
}

func redisBenchmark(args []string) (float64, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return 0, errors.New("redis-benchmark not found in PATH (Debian: apt-get install -y redis-tools)")
	}
	// One retry: through the delay line, on a machine loaded by other work, a run has failed
	// once in a whole benchmark, which would otherwise end it.
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		out, err = exec.Command(bin, args...).Output()
	}
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return 0, fmt.Errorf("redis-benchmark %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(stderr)))
	}
	rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		return 0, fmt.Errorf("redis-benchmark output %q: %v", out, err)
	}
	rps, err := strconv.ParseFloat(rows[1][1], 64)
	if err != nil || rps <= 0 {
		return 0, fmt.Errorf("redis-benchmark rps %q: %v", rows[1][1], err)
	}
	return rps, nil
}

func redisVersion(ctx context.Context, addr string) string {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			return v
		}
	}
	return "unknown"
}
