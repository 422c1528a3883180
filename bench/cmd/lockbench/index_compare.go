package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/redisproc"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The index comparison (-index-comparison): what a scrape interval costs Redis on a big shared
// keyspace (-index-other-keys cache keys from DEBUG POPULATE, -index-locks lock keys under
// "locks:job:") with lock churn between scrapes, for lock-exporter's index, its walk, redis_exporter
// --count-keys, and no exporter at all (the churn's own cost). Each interval is real time
// (-index-interval, 30s by default) so that the feed's steady work (a PING every 100ms, an INFO
// check every second) is counted; Redis CPU is INFO cpu's used_cpu_sys+used_cpu_user over the whole
// interval, the churn and the scrape at its end included.

// indexCmpConfig is the shape of one run.
type indexCmpConfig struct {
	otherKeys, locks, intervals int
	otherWrites                 int // a second, while notifications' cost on other keys is measured
	interval                    time.Duration
}

// intervalRun is one mode's measured intervals.
type intervalRun struct {
	mode             string
	cpu, scrapeWall  []time.Duration
	scrapeCPU        []time.Duration
	setupWall, setup time.Duration // the index's build (one walk), or nothing
	commands         []cmdDelta    // INFO commandstats over all its intervals
}

// lockChurn changes the lock keys between scrapes, and knows how many are live: every TTL is at
// least 45 minutes, longer than the run, so nothing expires unseen by the count.
type lockChurn struct {
	c    *redis.Client
	rng  *rand.Rand
	live map[string]bool
	next int
}

func (l *lockChurn) seed(ctx context.Context, n int) error {
	pipe := l.c.Pipeline()
	for range n {
		l.create(ctx, pipe)
	}
	_, err := pipe.Exec(ctx)
	return err
}

func (l *lockChurn) create(ctx context.Context, pipe redis.Pipeliner) {
	k := fmt.Sprintf("locks:job:%d", l.next)
	l.next++
	ttl := time.Duration(60+l.rng.IntN(30)) * time.Minute
	if l.next%50 == 0 {
		ttl = 0 // one in fifty never expires
	}
	pipe.Set(ctx, k, "token", ttl)
	l.live[k] = true
}

func (l *lockChurn) anyLive() string {
	for k := range l.live {
		return k
	}
	return ""
}

// burst runs n lock operations: deletes, new locks, renewals, PERSISTs and new expiries.
func (l *lockChurn) burst(ctx context.Context, n int) error {
	pipe := l.c.Pipeline()
	for range n {
		k := l.anyLive()
		switch l.rng.IntN(5) {
		case 0:
			pipe.Del(ctx, k)
			delete(l.live, k)
		case 1:
			l.create(ctx, pipe)
		case 2:
			pipe.PExpire(ctx, k, time.Duration(60+l.rng.IntN(30))*time.Minute)
		case 3:
			pipe.Persist(ctx, k)
		case 4:
			pipe.PExpire(ctx, k, time.Duration(45+l.rng.IntN(15))*time.Minute)
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

// runIndexComparison measures every mode in turn on one server.
func runIndexComparison(ctx context.Context, cfg indexCmpConfig, progress io.Writer) ([]intervalRun, string, error) {
	srv, err := redisproc.Start(ctx, redisproc.Config{Args: []string{"--enable-debug-command", "yes"}})
	if err != nil {
		return nil, "", err
	}
	defer srv.Stop()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 10 * time.Minute})
	defer admin.Close()
	start := time.Now()
	if err := admin.Do(ctx, "DEBUG", "POPULATE", cfg.otherKeys, "cache", 32).Err(); err != nil {
		return nil, "", fmt.Errorf("DEBUG POPULATE: %w", err)
	}
	fmt.Fprintf(progress, "index comparison: %d other keys populated in %v\n", cfg.otherKeys, time.Since(start).Round(time.Second))
	churn := &lockChurn{c: admin, rng: rand.New(rand.NewPCG(1, 23)), live: map[string]bool{}}
	if err := churn.seed(ctx, cfg.locks); err != nil {
		return nil, "", err
	}
	var runs []intervalRun
	modes := []string{"none"}
	for _, v := range indexVariants {
		modes = append(modes, v.mode)
	}
	for _, mode := range append(modes, "walk", "redis_exporter") {
		run, err := runMode(ctx, cfg, srv.Addr(), admin, churn, mode, progress)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", mode, err)
		}
		runs = append(runs, run)
	}
	bs, err := measureBackstop(ctx, srv.Addr(), admin, progress)
	if err != nil {
		return nil, "", fmt.Errorf("backstop: %w", err)
	}
	runs = append(runs, bs)
	notify, err := measureNotifyOn(ctx, admin, cfg, progress)
	if err != nil {
		return nil, "", fmt.Errorf("notifications on: %w", err)
	}
	return append(runs, notify...), redisVersion(ctx, srv.Addr()), nil
}

// backstopProbePace is the backstop walk's pace while its cost per key is measured: fast enough
// to cover millions of keys in the window, slow enough to stay a paced walk.
const (
	backstopProbePace   = 200_000
	backstopProbeWindow = 20 * time.Second
)

// measureBackstop measures the backstop walk's Redis CPU per key visited, over a window of a
// walk at backstopProbePace minus an idle window of the same length, and amortises it at the
// default pace over a 30 s interval (reported in the run's cpu[0]; scrapeCPU[0] is the cost per
// million keys visited).
func measureBackstop(ctx context.Context, addr string, admin *redis.Client, progress io.Writer) (intervalRun, error) {
	run := intervalRun{mode: "backstop"}
	idle0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return run, err
	}
	time.Sleep(backstopProbeWindow)
	idle1, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return run, err
	}
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		DisableIdentity: true, PoolSize: collectors.ConnectionsPerNode()})
	defer c.Close()
	s, err := collectors.NewScanner(c, collectors.Options{Namespaces: []collectors.Namespace{{Name: "jobs", Pattern: "locks:job:*"}},
		Mode: collectors.ModeAuto, Timeout: 5 * time.Minute, BackstopKeysPerSecond: backstopProbePace, BackstopEvery: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return run, err
	}
	defer s.Close()
	for res := s.Scan(ctx); res.Namespaces[0].Mode != "index"; res = s.Scan(ctx) {
		time.Sleep(100 * time.Millisecond) // the build
	}
	time.Sleep(time.Second) // the backstop walk starts 1 ms after the build
	cpu0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return run, err
	}
	time.Sleep(backstopProbeWindow)
	cpu1, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return run, err
	}
	res := s.Scan(ctx)
	if res.IndexCorrections != 0 {
		return run, fmt.Errorf("the backstop walk corrected %d entries of a feed that works", res.IndexCorrections)
	}
	perKey := float64((cpu1-cpu0)-(idle1-idle0)) / (backstopProbePace * backstopProbeWindow.Seconds())
	amortised := time.Duration(perKey * collectors.DefaultBackstopKeysPerSecond * 30)
	run.cpu = []time.Duration{amortised}
	run.scrapeCPU = []time.Duration{time.Duration(perKey * 1e6)}
	fmt.Fprintf(progress, "  backstop: %v Redis CPU per million keys visited; at %d keys/s, %v per 30 s interval\n",
		run.scrapeCPU[0].Round(time.Millisecond), collectors.DefaultBackstopKeysPerSecond, amortised.Round(time.Millisecond))
	return run, nil
}

// runMode sets one mode up and measures its intervals: churn in ten bursts across the interval,
// then the scrape, Redis CPU over all of it.
func runMode(ctx context.Context, cfg indexCmpConfig, addr string, admin *redis.Client, churn *lockChurn, mode string, progress io.Writer) (intervalRun, error) {
	run := intervalRun{mode: mode}
	scrape, closeMode, err := setUpMode(ctx, addr, admin, mode, &run)
	if err != nil {
		return run, err
	}
	defer closeMode()
	stats0, err := readCmdStats(ctx, admin)
	if err != nil {
		return run, err
	}
	perBurst := max(1, cfg.locks/100)
	for i := range cfg.intervals {
		cpu0, err := testkit.RedisCPU(ctx, admin)
		if err != nil {
			return run, err
		}
		for range 10 {
			if err := churn.burst(ctx, perBurst); err != nil {
				return run, err
			}
			time.Sleep(cfg.interval / 10)
		}
		var wall, scpu time.Duration
		if scrape != nil {
			wall, scpu, err = measure(ctx, admin, func() error { return scrape(len(churn.live)) })
			if err != nil {
				return run, err
			}
		}
		cpu1, err := testkit.RedisCPU(ctx, admin)
		if err != nil {
			return run, err
		}
		run.cpu = append(run.cpu, cpu1-cpu0)
		run.scrapeWall, run.scrapeCPU = append(run.scrapeWall, wall), append(run.scrapeCPU, scpu)
		fmt.Fprintf(progress, "  %s interval %d/%d: Redis CPU %v, scrape %v (Redis CPU %v)\n", mode, i+1, cfg.intervals,
			(cpu1 - cpu0).Round(time.Millisecond), wall.Round(time.Millisecond), scpu.Round(time.Millisecond))
	}
	stats1, err := readCmdStats(ctx, admin)
	run.commands = cmdsSince(stats1, stats0)
	fmt.Fprintf(progress, "  %s commands per interval: %s\n", mode, describeDeltas(run.commands, 8, cfg.intervals))
	return run, err
}

// setUpMode returns the mode's scrape, which checks the count it served against want.
func setUpMode(ctx context.Context, addr string, admin *redis.Client, mode string, run *intervalRun) (func(want int) error, func(), error) {
	if v, ok := variantOf(mode); ok {
		return setUpIndex(ctx, addr, admin, v, run)
	}
	switch mode {
	case "none":
		return nil, func() {}, nil
	case "walk":
		c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
			DisableIdentity: true, PoolSize: collectors.ConnectionsPerNode()})
		s, err := collectors.NewScanner(c, collectors.Options{Namespaces: []collectors.Namespace{{Name: "jobs", Pattern: lockPattern}},
			Mode: collectors.ModeWalk, Timeout: 5 * time.Minute, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		scrape := func(want int) error {
			res := s.Scan(ctx)
			ns := res.Namespaces[0]
			if !res.Up || !ns.Complete || ns.Keys != int64(want) {
				return fmt.Errorf("lock-exporter (%s): up %v complete %v, %d keys (%v), want %d", ns.Mode, res.Up, ns.Complete, ns.Keys, res.Err, want)
			}
			return nil
		}
		return scrape, func() { s.Close(); c.Close() }, nil
	case "redis_exporter":
		reg, err := newCountKeysOf(addr, []string{"db0=" + lockPattern})
		if err != nil {
			return nil, nil, err
		}
		return func(want int) error { return checkCounted(reg, want) }, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown mode %q", mode)
}

// setUpIndex attaches v's index, its build measured as set-up. The backstop walk is measured
// apart (measureBackstop), not inside these intervals.
func setUpIndex(ctx context.Context, addr string, admin *redis.Client, v indexVariant, run *intervalRun) (func(want int) error, func(), error) {
	cpu0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	a, err := attachIndex(ctx, addr, admin, v, -1)
	if err != nil {
		return nil, nil, err
	}
	cpu1, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		a.close(ctx, admin)
		return nil, nil, err
	}
	run.setupWall, run.setup = time.Since(start), cpu1-cpu0
	return func(want int) error { return a.scrape(ctx, want) }, func() { a.close(ctx, admin) }, nil
}

func checkCounted(reg *prometheus.Registry, want int) error {
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("redis_exporter: %w", err)
	}
	var counted float64
	for _, mf := range mfs {
		if mf.GetName() == "redis_keys_count" {
			for _, m := range mf.GetMetric() {
				counted += m.GetGauge().GetValue()
			}
		}
	}
	if int(counted) != want {
		return fmt.Errorf("redis_exporter counted %v keys, want %d", counted, want)
	}
	return nil
}

// indexComparisonMarkdown renders the runs.
func indexComparisonMarkdown(runs []intervalRun, cfg indexCmpConfig, redisVer string) string {
	var b strings.Builder
	base, theirs, backstop := runs[0], modeRun(runs, "redis_exporter"), modeRun(runs, "backstop")
	theirCPU := medianDuration(theirs.scrapeCPU)
	b.WriteString("\n## The lock-key index on a big shared keyspace\n\n")
	fmt.Fprintf(&b, "One redis-server %s with %s other keys (`DEBUG POPULATE`) and %s lock keys under `locks:job:`, "+
		"%d lock operations (deletes, new locks, renewals, `PERSIST`s, new expiries) in ten bursts per %v interval, "+
		"then one scrape; medians of %d intervals per mode (`go run ./cmd/lockbench -index-comparison`, in `bench/`). "+
		"Every scrape's count was checked against the live lock keys, and every index scrape showed "+
		"`lock_exporter_lifecycle_following` 1. The index runs as the documented least-privilege user, "+
		"with the holder grant (`+getrange +hscan`) only where the mode says so; the notifications mode "+
		"sets `notify-keyspace-events %s` for its intervals (the other modes run with it off).\n\n",
		redisVer, humanCount(cfg.otherKeys), humanCount(cfg.locks), max(1, cfg.locks/100)*10, cfg.interval, cfg.intervals, notifyClasses)
	b.WriteString("| mode | Redis CPU per interval | attributable to the exporter | ÷ redis_exporter's per scrape | with the backstop | scrape wall | scrape's Redis CPU | set-up (index build) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		if r.mode == "backstop" || strings.HasPrefix(r.mode, "other writes") {
			continue
		}
		writeModeRow(&b, r, medianDuration(base.cpu), theirCPU, backstop.cpu[0])
	}
	fmt.Fprintf(&b, "\nBackstop walk (measured apart, over a %v window of a walk paced at %d keys/s, less an idle window): "+
		"%.0f ms of Redis CPU per million keys visited, so at the default %d keys/s **%.1f ms per 30 s interval**, "+
		"%.2f%% of redis_exporter's per scrape; 0 corrections.\n",
		backstopProbeWindow, backstopProbePace, float64(backstop.scrapeCPU[0].Microseconds())/1000,
		collectors.DefaultBackstopKeysPerSecond, float64(backstop.cpu[0].Microseconds())/1000, 100*backstop.cpu[0].Seconds()/theirCPU.Seconds())
	b.WriteString("\nThe index's commands per interval beyond the no-exporter intervals' (`INFO commandstats`: calls, execution time):\n\n")
	for _, v := range indexVariants {
		r := modeRun(runs, v.mode)
		fmt.Fprintf(&b, "- %s: %s\n", v.mode, describeDeltas(minusDeltas(r.commands, base.commands), 8, cfg.intervals))
	}
	writeNotifyOn(&b, runs, cfg, theirCPU)
	return b.String()
}

func modeRun(runs []intervalRun, mode string) intervalRun {
	for _, r := range runs {
		if r.mode == mode {
			return r
		}
	}
	return intervalRun{mode: mode}
}

// writeModeRow writes one mode's row: its Redis CPU less the no-exporter intervals', as a share
// of redis_exporter's per scrape, and for the index with the backstop's amortised share added.
func writeModeRow(b *strings.Builder, r intervalRun, base, theirs, backstop time.Duration) {
	cpu := medianDuration(r.cpu)
	attr := cpu - base
	attrS, ratio, withBackstop, wall, scpu, setup := "—", "—", "—", "—", "—", "—"
	if r.mode != "none" {
		attrS = fmt.Sprintf("%.3f s", attr.Seconds())
		ratio = fmt.Sprintf("%.2f%%", 100*attr.Seconds()/theirs.Seconds())
		wall = fmt.Sprintf("%.1f ms", float64(medianDuration(r.scrapeWall).Microseconds())/1000)
		scpu = fmt.Sprintf("%.1f ms", float64(medianDuration(r.scrapeCPU).Microseconds())/1000)
	}
	if _, ok := variantOf(r.mode); ok {
		withBackstop = fmt.Sprintf("**%.2f%%**", 100*(attr+backstop).Seconds()/theirs.Seconds())
	}
	if r.setupWall > 0 {
		setup = fmt.Sprintf("%.1f s wall, %.1f s Redis CPU", r.setupWall.Seconds(), r.setup.Seconds())
	}
	fmt.Fprintf(b, "| %s | %.3f s | %s | %s | %s | %s | %s | %s |\n", r.mode, cpu.Seconds(), attrS, ratio, withBackstop, wall, scpu, setup)
}

// writeNotifyOn writes what notifications being on cost the writes of other keys.
func writeNotifyOn(b *strings.Builder, runs []intervalRun, cfg indexCmpConfig, theirs time.Duration) {
	idle, off, on := medianDuration(modeRun(runs, notifyIdle).cpu), medianDuration(modeRun(runs, notifyOff).cpu), medianDuration(modeRun(runs, notifyOn).cpu)
	writes := float64(max(1, cfg.otherWrites/otherWritesBatch)*otherWritesBatch) * notifyWindow.Seconds()
	extra := on - off
	perInterval := time.Duration(float64(extra) * 30 / notifyWindow.Seconds())
	fmt.Fprintf(b, "\n**Notifications on, while other keys are written** (apart: %d `SET`s a second of `cache:` keys in pipelines of %d, "+
		"a subscriber to the feed's two patterns attached throughout, %v windows with `notify-keyspace-events` off, `%s`, and idle, "+
		"rotated, medians of %d): idle %.3f s, off %.3f s, on %.3f s per window. Notifications on cost **%.2f µs of Redis CPU per write** "+
		"(the writes' own: %.2f µs, so %+.0f%%); at %d writes a second that is %.3f s per 30 s interval, %.2f%% of redis_exporter's per scrape, "+
		"paid by every write to any key while the setting is on, whoever subscribes.\n",
		cfg.otherWrites, otherWritesBatch, notifyWindow, notifyClasses, notifyRounds, idle.Seconds(), off.Seconds(), on.Seconds(),
		float64(extra.Nanoseconds())/1000/writes, float64((off-idle).Nanoseconds())/1000/writes, 100*extra.Seconds()/(off-idle).Seconds(),
		cfg.otherWrites, perInterval.Seconds(), 100*perInterval.Seconds()/theirs.Seconds())
}
