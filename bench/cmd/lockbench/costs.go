package main

import (
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// -costs prints, for every timed run, what one cycle cost on both sides of the socket, so that a
// throughput difference between two libraries can be traced to its cause (on a machine whose
// CPU hogs, Redis and the client share two cores, both sides' CPU and the number
// of wake-ups decide): Redis's CPU time and the commands it read per read event, the context
// switches of Redis and of this process, this process's read and write system calls, and how
// often the Go scheduler put a goroutine on a thread. For lease on its default client, a
// go-redis hook also counts how its commands left: alone or in pipelines, and how many sends
// were on the wire when each began (the adaptive cap at work).

// costCounters are the counters -costs reads before and after a timed run.
type costCounters struct {
	redisCPU              time.Duration // redis-server's user+system CPU (INFO cpu)
	redisCmds, redisReads int64         // INFO stats: commands processed, read events
	redisSwitches         int64         // redis-server's voluntary + involuntary context switches
	switches, involuntary int64         // this process's context switches (getrusage), and the involuntary part
	syscalls              int64         // this process's read and write system calls (/proc/self/io)
	schedules             uint64        // goroutines put on a thread (/sched/latencies:seconds count)
	schedWait             float64       // the sum of their runnable-to-running latencies, seconds
}

// readCosts reads every counter; a counter it cannot read stays zero.
func readCosts(ctx context.Context, rdb *redis.Client) costCounters {
	var c costCounters
	if info, err := rdb.Info(ctx, "cpu", "stats", "server").Result(); err == nil {
		fields := infoFields(info)
		c.redisCPU = time.Duration((atof(fields["used_cpu_sys"]) + atof(fields["used_cpu_user"])) * float64(time.Second))
		c.redisCmds = int64(atof(fields["total_commands_processed"]))
		c.redisReads = int64(atof(fields["total_reads_processed"]))
		c.redisSwitches = procSwitches(fields["process_id"])
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.switches, c.involuntary = ru.Nvcsw+ru.Nivcsw, ru.Nivcsw
	}
	if b, err := os.ReadFile("/proc/self/io"); err == nil {
		f := colonFields(string(b))
		c.syscalls = int64(atof(f["syscr"]) + atof(f["syscw"]))
	}
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[0].Value.Float64Histogram()
		for i, n := range h.Counts {
			c.schedules += n
			lo, hi := h.Buckets[i], h.Buckets[i+1]
			if hi > 1e9 { // the last bucket is open
				hi = lo
			}
			if lo < 0 {
				lo = 0
			}
			c.schedWait += float64(n) * (lo + hi) / 2
		}
	}
	return c
}

// costLine formats what a run cost per cycle (per attempt on a contended key).
func costLine(before, after costCounters, smp sample, sc *sendCounts) string {
	n := float64(smp.attempts)
	cmds := float64(after.redisCmds - before.redisCmds)
	var b strings.Builder
	fmt.Fprintf(&b, "redis %5.2f µs CPU/attempt %5.2f cmds/read %5.2f switches/attempt | client %5.2f µs CPU/attempt %5.2f switches (%4.2f involuntary) %5.2f syscalls %5.2f schedules/attempt, %5.1f µs mean runnable",
		float64((after.redisCPU-before.redisCPU).Microseconds())/n,
		cmds/max(1, float64(after.redisReads-before.redisReads)),
		float64(after.redisSwitches-before.redisSwitches)/n,
		smp.cpuNsPerAttempt()/1000,
		float64(after.switches-before.switches)/n,
		float64(after.involuntary-before.involuntary)/n,
		float64(after.syscalls-before.syscalls)/n,
		float64(after.schedules-before.schedules)/n,
		(after.schedWait-before.schedWait)/max(1, float64(after.schedules-before.schedules))*1e6)
	if sc != nil {
		b.WriteString(" | " + sc.String())
	}
	return b.String()
}

func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

func colonFields(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

func atof(s string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f
}

// procSwitches is the voluntary plus involuntary context switches of process pid.
func procSwitches(pid string) int64 {
	b, err := os.ReadFile("/proc/" + strings.TrimSpace(pid) + "/status")
	if err != nil {
		return 0
	}
	f := colonFields(string(b))
	return int64(atof(f["voluntary_ctxt_switches"]) + atof(f["nonvoluntary_ctxt_switches"]))
}

// sendCounts is a go-redis hook that counts how a client's commands leave: alone or in
// pipelines, the pipelines' sizes, and how many sends were already on the wire when each began.
type sendCounts struct {
	onWire  atomic.Int64
	singles atomic.Int64
	pipes   atomic.Int64
	piped   atomic.Int64
	// beside[n] counts sends that began with n others on the wire (the last bucket: or more).
	beside [5]atomic.Int64
	// sizes[i] counts pipelines of 2^i to 2^(i+1)-1 commands (the last bucket: or more).
	sizes [7]atomic.Int64
}

func (c *sendCounts) reset() {
	c.singles.Store(0)
	c.pipes.Store(0)
	c.piped.Store(0)
	for i := range c.beside {
		c.beside[i].Store(0)
	}
	for i := range c.sizes {
		c.sizes[i].Store(0)
	}
}

func (c *sendCounts) begin() {
	n := c.onWire.Add(1) - 1
	c.beside[min(int(n), len(c.beside)-1)].Add(1)
}

func (c *sendCounts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *sendCounts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.begin()
		defer c.onWire.Add(-1)
		c.singles.Add(1)
		return next(ctx, cmd)
	}
}

func (c *sendCounts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.begin()
		defer c.onWire.Add(-1)
		c.pipes.Add(1)
		c.piped.Add(int64(len(cmds)))
		i := 0
		for n := len(cmds); n > 1 && i < len(c.sizes)-1; n >>= 1 {
			i++
		}
		c.sizes[i].Add(1)
		return next(ctx, cmds)
	}
}

// String says what share of the commands went alone, the mean pipeline, the pipelines' sizes
// (1, 2–3, 4–7, … commands) and the sends on the wire beside each new one (0, 1, 2, 3, 4+).
func (c *sendCounts) String() string {
	singles, pipes, piped := c.singles.Load(), c.pipes.Load(), c.piped.Load()
	sends := max(1, singles+pipes)
	var sizes, beside []string
	for i := range c.sizes {
		sizes = append(sizes, fmt.Sprintf("%.0f", 100*float64(c.sizes[i].Load())/float64(max(1, pipes))))
	}
	for i := range c.beside {
		beside = append(beside, fmt.Sprintf("%.0f", 100*float64(c.beside[i].Load())/float64(sends)))
	}
	return fmt.Sprintf("%4.1f%% of cmds alone, %4.2f cmds/send, pipeline sizes %% [%s], others on the wire %% [%s]",
		100*float64(singles)/float64(max(1, singles+piped)), float64(singles+piped)/float64(sends),
		strings.Join(sizes, " "), strings.Join(beside, " "))
}
