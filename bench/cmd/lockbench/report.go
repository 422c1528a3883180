package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

type fact struct{ name, value string }

func machineFacts(ctx context.Context, addr string) []fact {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	load := loadAverage()
	rev := "unknown"
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		rev = strings.TrimSpace(string(out))
	}
	return []fact{
		{"date (UTC)", time.Now().UTC().Format("2006-01-02 15:04")},
		{"nproc", fmt.Sprint(runtime.NumCPU())},
		{"GOMAXPROCS", fmt.Sprint(runtime.GOMAXPROCS(0))},
		{"CPU", cpu},
		{"Go", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"redis-server", redisVersion(ctx, addr)},
		{"load average at start (1/5/15 min)", load},
		{"lockwatch revision", rev},
	}
}

// loadAverage is the 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// report collects the samples of every round and renders them.
type report struct {
	cfg      config
	facts    []fact
	variants []variant             // in first-seen order
	samples  [][]map[string]sample // [shape][round][variant name]
	ceilings [][]ceiling           // [shape][round]
	local    []map[string]sample   // [round][variant name]: redishook.AnswerLocally runs
	localV   []variant
	scrape   []scrapeRow
	conns    []int // [shape]: its goroutines, and redis-benchmark's clients
	// rtts are the median PING round trips, direct and through the delay line, of each round.
	rtts [][2]time.Duration
}

func newReport(cfg config, facts []fact) *report {
	r := &report{cfg: cfg, facts: facts}
	r.samples = make([][]map[string]sample, len(shapes))
	r.ceilings = make([][]ceiling, len(shapes))
	r.conns = make([]int, len(shapes))
	for i := range shapes {
		r.samples[i] = make([]map[string]sample, cfg.rounds)
		for j := range r.samples[i] {
			r.samples[i][j] = map[string]sample{}
		}
	}
	return r
}

func (r *report) add(shapeIdx int, v variant, round int, s sample) {
	if !slices.ContainsFunc(r.variants, func(x variant) bool { return x.name == v.name }) {
		r.variants = append(r.variants, v)
	}
	r.samples[shapeIdx][round][v.name] = s
}

func (r *report) addLocal(round int, v variant, s sample) {
	for len(r.local) <= round {
		r.local = append(r.local, map[string]sample{})
	}
	if !slices.ContainsFunc(r.localV, func(x variant) bool { return x.name == v.name }) {
		r.localV = append(r.localV, v)
	}
	r.local[round][v.name] = s
}

func (r *report) localSeries(name string, f func(sample) float64) []float64 {
	var xs []float64
	for _, round := range r.local {
		if s, ok := round[name]; ok {
			xs = append(xs, f(s))
		}
	}
	return xs
}

func (r *report) addCeiling(shapeIdx int, c ceiling, conns int) {
	r.ceilings[shapeIdx] = append(r.ceilings[shapeIdx], c)
	r.conns[shapeIdx] = conns
}

func (r *report) addRTT(direct, through time.Duration) {
	r.rtts = append(r.rtts, [2]time.Duration{direct, through})
}

// addedRTT is the median over rounds of the round trip the delay line added to a PING, and the
// median direct round trip.
func (r *report) addedRTT() (added, direct time.Duration) {
	var adds, directs []float64
	for _, x := range r.rtts {
		adds = append(adds, float64(x[1]-x[0]))
		directs = append(directs, float64(x[0]))
	}
	return time.Duration(median(adds)), time.Duration(median(directs))
}

// loadedRTTs writes, for the added-RTT shape si, the round trip a PING through the delay line
// took while each variant ran (probe.go), beside the idle one: how far the added delay held
// under each library's traffic.
func (r *report) loadedRTTs(b *strings.Builder, si int) {
	added, direct := r.addedRTT()
	var each []string
	for _, v := range r.variantsIn(si) {
		rtt := time.Duration(median(r.series(si, v.name, sample.loadedRTTNs)))
		each = append(each, fmt.Sprintf("%s +%s", v.name, (rtt-direct).Round(time.Microsecond)))
	}
	fmt.Fprintf(b, "Round trip a PING through the delay line added over the direct one while each variant ran "+
		"(measured inside the line's process, medians over rounds; idle: +%s): %s.\n\n",
		added.Round(time.Microsecond), strings.Join(each, ", "))
}

// variantsIn are the variants measured in shape si, in first-seen order.
func (r *report) variantsIn(si int) []variant {
	var vs []variant
	for _, v := range r.variants {
		if len(r.series(si, v.name, sample.cyclesPerSec)) > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// series is one number of one variant across the rounds.
func (r *report) series(si int, name string, f func(sample) float64) []float64 {
	var xs []float64
	for _, round := range r.samples[si] {
		if s, ok := round[name]; ok {
			xs = append(xs, f(s))
		}
	}
	return xs
}

// paired is the median over rounds of f(a)/f(b) - ratios taken within a round, where both ran
// back to back, cancel most of the machine's slow drift.
func (r *report) paired(si int, a, b string, f func(sample) float64) float64 {
	return median(r.ratios(si, a, b, f))
}

// ratios are the per-round ratios f(a)/f(b) in shape si.
func (r *report) ratios(si int, a, b string, f func(sample) float64) []float64 {
	var xs []float64
	for _, round := range r.samples[si] {
		sa, okA := round[a]
		sb, okB := round[b]
		if okA && okB && f(sb) != 0 {
			xs = append(xs, f(sa)/f(sb))
		}
	}
	return xs
}

// lowerQuartile is the 25th percentile of xs, interpolated between ranks.
func lowerQuartile(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := 0.25 * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// isPeer is true for a peer library in the configuration its users run (its own client, no
// go-redis AutoPipeline): the targets are set against those.
func isPeer(name string) bool {
	return !strings.HasPrefix(name, "lease") && !strings.HasSuffix(name, autoSuffix)
}

const (
	leaseOn    = "lease (metrics on)"
	leaseOff   = "lease (metrics off)"
	autoSuffix = " + AutoPipeline"
	// singleSuffix marks lease's single-command baseline: one command per round trip.
	singleSuffix = " + single commands"
)

// fastestPeer and leanestPeer pick by median.
func (r *report) fastestPeer(si int) string {
	best, bestV := "", -1.0
	for _, v := range r.variantsIn(si) {
		if m := median(r.series(si, v.name, sample.cyclesPerSec)); isPeer(v.name) && m > bestV {
			best, bestV = v.name, m
		}
	}
	return best
}

func (r *report) leanestPeer(si int) string {
	best, bestV := "", math.Inf(1)
	for _, v := range r.variantsIn(si) {
		if m := median(r.series(si, v.name, sample.allocsPerAttempt)); isPeer(v.name) && m < bestV {
			best, bestV = v.name, m
		}
	}
	return best
}

func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# lockwatch benchmark results\n\n")
	w("Generated by `%s` (bench/cmd/lockbench); do not edit by hand. How to read it: "+
		"[performance.md](performance.md).\n\n", r.cfg.reproduceCmd)
	w("| machine | |\n|---|---|\n")
	for _, f := range r.facts {
		w("| %s | %s |\n", f.name, f.value)
	}
	w("\nSettings: %d rounds × %s per variant and shape, variants in rotated order each round; every figure is "+
		"the median over rounds, ratios are medians of per-round ratios (both sides of a ratio ran seconds apart "+
		"in the same round), shown with their lower quartile over rounds. Each shape's concurrency is in its "+
		"heading; redis-benchmark runs as many clients. Load average at the end: %s. The machine may be shared "+
		"with other work: only the same-run ratios are worth comparing between runs.\n\n",
		r.cfg.rounds, r.cfg.duration, loadAverage())

	if len(r.variants) > 0 {
		r.lockTables(&b)
		r.localTable(&b)
		r.targets(&b)
	}
	if len(r.scrape) > 0 {
		r.scrapeTable(&b)
	}
	w("## Libraries\n\n| variant | cycle |\n|---|---|\n")
	for _, v := range r.variants {
		if !strings.HasSuffix(v.name, autoSuffix) {
			w("| %s | %s |\n", v.name, v.note)
		}
	}
	w("| … + AutoPipeline | the same library on go-redis's `Client.AutoPipeline()` face (same client options), which batches concurrent callers' commands into shared pipelines |\n")
	w("| ceiling | redis-benchmark `SET k v NX PX 10000` and `EVALSHA <compare-and-delete> 1 k v`, same server, same run; cycles/s = 1/(1/SET rps + 1/EVALSHA rps) |\n")
	return b.String()
}

// shapeHeading says what shape si is: its concurrency and what runs beside it.
func (r *report) shapeHeading(si int) string {
	s := shapes[si]
	h := fmt.Sprintf("%s, %d goroutine", s.name, r.conns[si])
	if r.conns[si] != 1 {
		h += "s"
	}
	switch {
	case s.delayed:
		added, direct := r.addedRTT()
		h += fmt.Sprintf(" (delay line of %s per round trip; PING through it: +%s over the direct %s, medians)",
			r.cfg.addedRTT, added.Round(time.Microsecond), direct.Round(time.Microsecond))
	case s.hogs:
		h += fmt.Sprintf(" (%d CPU hog processes running, each pinned to a CPU of its own)", r.cfg.hogs)
	}
	return h
}

func (r *report) lockTables(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Lock + unlock cycles\n\n")
	w("One attempt = one try-once acquire; when it succeeds, the release follows and the attempt " +
		"counts as a cycle. With distinct keys every attempt is a cycle. ns, CPU, allocs and B are per attempt; " +
		"client CPU is this process's user+system time (the benchmark's own loop included), which other " +
		"processes on the machine disturb far less than wall time.\n\n")
	for si := range shapes {
		if len(r.ceilings[si]) == 0 {
			continue
		}
		fastest := r.fastestPeer(si)
		ceil := median(mapCeil(r.ceilings[si], ceiling.cyclesPerSec))
		w("### %s\n\n", r.shapeHeading(si))
		w("| variant | cycles/s | attempts/s | ns/attempt | client CPU ns/attempt | allocs/op | B/op | cycles/s vs %s | of ceiling | spread | errors |\n", fastest)
		w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, v := range r.variantsIn(si) {
			cyc := r.series(si, v.name, sample.cyclesPerSec)
			var errs int64
			for _, round := range r.samples[si] {
				errs += round[v.name].errors
			}
			w("| %s | %.0f | %.0f | %.0f | %.0f | %.1f | %.0f | %.2f× | %.0f%% | %s | %d |\n",
				v.name, median(cyc),
				median(r.series(si, v.name, sample.attemptsPerSec)),
				median(r.series(si, v.name, sample.nsPerAttempt)),
				median(r.series(si, v.name, sample.cpuNsPerAttempt)),
				median(r.series(si, v.name, sample.allocsPerAttempt)),
				median(r.series(si, v.name, sample.bytesPerAttempt)),
				r.paired(si, v.name, fastest, sample.cyclesPerSec),
				100*median(cyc)/ceil,
				spread(cyc), errs)
		}
		get := func(f func(ceiling) float64) float64 { return median(mapCeil(r.ceilings[si], f)) }
		piped := get(ceiling.pipedCyclesPerSec)
		conns := r.conns[si]
		w("| **ceiling**, one command per round trip (redis-benchmark -c %d) | %.0f | %.0f | %.0f | | | | | 100%% | | |\n",
			conns, ceil, get(func(c ceiling) float64 { return c.setRPS }), 1e9/ceil)
		w("| **pipelined ceiling**, one connection %d deep (-c 1 -P %d) | %.0f | %.0f | %.0f | | | | | %.0f%% | | |\n\n",
			conns, conns, piped, get(func(c ceiling) float64 { return c.pipedSetRPS }), 1e9/piped, 100*piped/ceil)
		w("Ceiling commands (requests/s): SET NX PX %.0f, EVALSHA compare-and-delete %.0f; pipelined %.0f and %.0f. "+
			"The ceilings' attempts/s column is SET NX PX alone.\n\n",
			get(func(c ceiling) float64 { return c.setRPS }), get(func(c ceiling) float64 { return c.evalRPS }),
			get(func(c ceiling) float64 { return c.pipedSetRPS }), get(func(c ceiling) float64 { return c.pipedEvalRPS }))
		if shapes[si].delayed {
			r.loadedRTTs(b, si)
		}
		for _, v := range r.variantsIn(si) {
			for _, round := range r.samples[si] {
				if smp := round[v.name]; smp.firstErr != nil {
					w("Errors of %s (first one): `%v`.\n\n", v.name, smp.firstErr)
					break
				}
			}
		}
	}
}

func (r *report) localTable(b *strings.Builder) {
	if len(r.localV) == 0 {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("### Client-side cost of a cycle, network removed\n\n")
	w("One goroutine, cycles on one key, every command answered in-process by a go-redis hook " +
		"(SET NX → true, scripts → 1), so only the library's and go-redis's own work remains. " +
		"rueidislock has no such hook point and is not in this table.\n\n")
	w("| variant | CPU ns/cycle | ns/cycle | allocs/op | B/op | spread |\n|---|--:|--:|--:|--:|--:|\n")
	for _, v := range r.localV {
		cpu := r.localSeries(v.name, sample.cpuNsPerAttempt)
		w("| %s | %.0f | %.0f | %.1f | %.0f | %s |\n", v.name, median(cpu),
			median(r.localSeries(v.name, sample.nsPerAttempt)),
			median(r.localSeries(v.name, sample.allocsPerAttempt)),
			median(r.localSeries(v.name, sample.bytesPerAttempt)), spread(cpu))
	}
	w("\n")
}

// metricsCost is the CPU the metrics add to one cycle: the per-round difference of lease with
// metrics on and off, network removed.
func (r *report) metricsCost() float64 {
	var xs []float64
	for _, round := range r.local {
		on, okOn := round[leaseOn]
		off, okOff := round[leaseOff]
		if okOn && okOff {
			xs = append(xs, on.cpuNsPerAttempt()-off.cpuNsPerAttempt())
		}
	}
	return median(xs)
}

func mapCeil(cs []ceiling, f func(ceiling) float64) []float64 {
	xs := make([]float64, len(cs))
	for i, c := range cs {
		xs[i] = f(c)
	}
	return xs
}

// spread is (max-min)/median: how noisy the rounds were.
func spread(xs []float64) string {
	if len(xs) < 2 {
		return "–"
	}
	return fmt.Sprintf("±%.0f%%", 50*(slices.Max(xs)-slices.Min(xs))/median(xs))
}

func verdict(ok, withinNoise bool) string {
	switch {
	case ok:
		return "met"
	case withinNoise:
		return "within noise"
	}
	return "**missed**"
}

func (r *report) targets(b *strings.Builder) {
	fmt.Fprint(b, "## Targets\n\n")
	fmt.Fprintf(b, "Decision rule: a throughput goal is judged on the median of the per-round ratios over at least %d "+
		"interleaved rounds; the lower quartile (q1) of those ratios is shown beside it, with the shape's "+
		"redis-benchmark ceiling, so the regime of the run is visible. Fewer rounds give figures but no verdict.\n\n",
		minJudgedRounds)
	fmt.Fprint(b, "| target | measured | ceiling (cycles/s) | verdict |\n|---|---|--:|---|\n")
	if r.hasVariant(leaseOn) {
		for si, s := range shapes {
			if len(r.ceilings[si]) > 0 {
				r.shapeTargets(b, si, s)
			}
		}
	}
	if r.hasVariant(leaseOn) && r.hasVariant(leaseOff) {
		r.metricsCostTarget(b)
	}
	if len(r.scrape) > 0 {
		r.exporterTargets(b)
	}
	fmt.Fprint(b, "\n")
}

// minJudgedRounds is the decision rule's minimum of interleaved rounds.
const minJudgedRounds = 15

func (r *report) hasVariant(name string) bool {
	return slices.ContainsFunc(r.variants, func(v variant) bool { return v.name == name })
}

// ratioVerdict judges the per-round ratios xs against goal by their median, when there are
// enough of them.
func ratioVerdict(xs []float64, goal float64) string {
	switch {
	case len(xs) < minJudgedRounds:
		return fmt.Sprintf("not judged (%d rounds < %d)", len(xs), minJudgedRounds)
	case median(xs) >= goal:
		return "met"
	}
	return "**missed**"
}

// shapeTargets are lease's rows for one shape: the default client against the fastest peer
// (or, for the lone caller, against its single-command baseline), its allocations against the
// peers', and its ratio to each peer and to the baseline for reference.
func (r *report) shapeTargets(b *strings.Builder, si int, s shape) {
	ceil := median(mapCeil(r.ceilings[si], ceiling.cyclesPerSec))
	single := leaseOn + singleSuffix
	row := func(what string, xs []float64, goal float64) {
		fmt.Fprintf(b, "| %s: %s | %.2f× (q1 %.2f×, %d rounds) | %.0f | %s |\n",
			s.name, what, median(xs), lowerQuartile(xs), len(xs), ceil, ratioVerdict(xs, goal))
	}
	if s.goal == 0 {
		if r.hasVariant(single) {
			row(fmt.Sprintf("%s cycles/s ≥ 0.98× %s (lone caller within 2%% of sending alone)", leaseOn, single),
				r.ratios(si, leaseOn, single, sample.cyclesPerSec), 0.98)
		}
		return
	}
	fastest := r.fastestPeer(si)
	if fastest == "" {
		return
	}
	row(fmt.Sprintf("%s cycles/s ≥ %.2f× the fastest peer (%s)", leaseOn, s.goal, fastest),
		r.ratios(si, leaseOn, fastest, sample.cyclesPerSec), s.goal)
	if rq := "rueidislock"; fastest != rq && r.hasVariant(rq) {
		row(fmt.Sprintf("%s cycles/s ≥ %.2f× %s", leaseOn, s.goal, rq), r.ratios(si, leaseOn, rq, sample.cyclesPerSec), s.goal)
	}
	allocs := median(r.series(si, leaseOn, sample.allocsPerAttempt))
	fewest := true
	var others []string
	for _, v := range r.variantsIn(si) {
		if !isPeer(v.name) {
			continue
		}
		a := median(r.series(si, v.name, sample.allocsPerAttempt))
		others = append(others, fmt.Sprintf("%s %.1f", v.name, a))
		fewest = fewest && allocs < a
	}
	// The ≤ 29 guard is set per cycle, so on distinct keys, where every attempt is one.
	limit, okAllocs := "", fewest
	if !s.contends {
		limit, okAllocs = "≤ 29 and ", okAllocs && allocs <= 29
	}
	fmt.Fprintf(b, "| %s: %s allocs/op %sthe fewest of all libraries | %.1f (%s) | | %s |\n",
		s.name, leaseOn, limit, allocs, strings.Join(others, ", "), verdict(okAllocs, false))
	var each []string
	for _, v := range r.variantsIn(si) {
		if isPeer(v.name) || v.name == single {
			each = append(each, fmt.Sprintf("%s %.2f×", v.name, r.paired(si, leaseOn, v.name, sample.cyclesPerSec)))
		}
	}
	fmt.Fprintf(b, "| %s: %s cycles/s vs each peer and the single-command baseline | %s | | |\n", s.name, leaseOn, strings.Join(each, ", "))
	if auto := leaseOn + autoSuffix + singleSuffix; r.hasVariant(auto) && s.all {
		fmt.Fprintf(b, "| %s, reference only: %s cycles/s vs %s | %.2f× | | not a supported lease configuration (deadlines, see performance.md) |\n",
			s.name, auto, fastest, r.paired(si, auto, fastest, sample.cyclesPerSec))
	}
}

// metricsCostTarget sets the metrics' cost, measured without the network, against a real
// cycle's client CPU (the stricter denominator: it is smaller than the cycle's wall time).
func (r *report) metricsCostTarget(b *strings.Builder) {
	cost := r.metricsCost()
	const distinct = 0
	cycleCPU := median(r.series(distinct, leaseOff, sample.cpuNsPerAttempt))
	localCycle := median(r.localSeries(leaseOff, sample.cpuNsPerAttempt))
	wall := r.paired(distinct, leaseOn, leaseOff, sample.nsPerAttempt) - 1
	fmt.Fprintf(b, "| metrics cost < 3%% of a cycle | %+.0f ns CPU per cycle = %.2f%% of a real cycle's client CPU (%.0f ns), "+
		"%.1f%% of the network-free cycle (%.0f ns); full-run wall on vs off %+.1f%% (noise) | %s |\n",
		cost, 100*cost/cycleCPU, cycleCPU, 100*cost/localCycle, localCycle, 100*wall, verdict(cost/cycleCPU < 0.03, false))
}

func (r *report) exporterTargets(b *strings.Builder) {
	worst, heap1M, first, last := 0.0, math.NaN(), r.scrape[0], r.scrape[len(r.scrape)-1]
	for _, row := range r.scrape {
		worst = max(worst, row.metrics["x-ceiling"])
		if row.keys == 1_000_000 {
			heap1M = row.metrics["peak-heap-MiB"]
		}
	}
	fmt.Fprintf(b, "| exporter per-key cost ≤ 3× the PTTL pipeline ceiling | worst %.2f× | %s |\n", worst, verdict(worst <= 3, false))
	fmt.Fprintf(b, "| exporter peak heap < 64 MiB at 1M keys | %.1f MiB | %s |\n", heap1M, verdict(heap1M < 64, false))
	// Redis's own per-command cost grows with the keyspace (the ceiling is measured on the
	// seeded keyspace), so linearity is judged on the cost relative to the ceiling; the
	// absolute growth is shown next to it.
	lin := last.metrics["x-ceiling"] / first.metrics["x-ceiling"]
	fmt.Fprintf(b, "| exporter cost linear in keys: per-key cost ÷ ceiling at %d keys vs at %d | %.2f (absolute ns/key %.2f, ceiling %.2f) | %s |\n",
		last.keys, first.keys, lin, last.metrics["ns/key"]/first.metrics["ns/key"],
		last.metrics["ceiling-ns/PTTL"]/first.metrics["ceiling-ns/PTTL"], verdict(lin <= 1.25, lin <= 1.5))
}

// scrapeColumns are shown first, in this order, when the benchmark reports them; any other
// metric it reports follows, so the table keeps up with the benchmark.
var scrapeColumns = []string{"ns/key", "ceiling-ns/PTTL", "x-ceiling", "cmds/key", "peak-heap-MiB"}

func (r *report) scrapeTable(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Exporter scrape cost\n\n`collectors.BenchmarkScrape` (`go test -run '^$' -bench '^BenchmarkScrape$' -benchtime %s ./collectors`), "+
		"one namespace, every key matching, ceiling = `redis-benchmark -P 100 PTTL` on the same server in the same run. "+
		"Units as the benchmark reports them (x- columns are ratios).\n\n", r.cfg.scrapeTime)
	var cols []string
	for _, c := range scrapeColumns {
		if _, ok := r.scrape[0].metrics[c]; ok {
			cols = append(cols, c)
		}
	}
	var rest []string
	for c := range r.scrape[0].metrics {
		if !slices.Contains(cols, c) && c != "ns/op" {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	cols = append(cols, rest...)
	w("| keys | %s |\n|--:|%s\n", strings.Join(cols, " | "), strings.Repeat("--:|", len(cols)))
	for _, row := range r.scrape {
		w("| %d |", row.keys)
		for _, c := range cols {
			v, ok := row.metrics[c]
			switch {
			case !ok:
				w(" – |")
			case strings.HasPrefix(c, "x-"):
				w(" %.2f× |", v)
			case v < 10:
				w(" %.3g |", v)
			default:
				w(" %.0f |", v)
			}
		}
		w("\n")
	}
	w("\n")
}
