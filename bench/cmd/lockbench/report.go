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
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
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
}

func newReport(cfg config, facts []fact) *report {
	r := &report{cfg: cfg, facts: facts}
	r.samples = make([][]map[string]sample, len(shapes))
	r.ceilings = make([][]ceiling, len(shapes))
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

func (r *report) addCeiling(shapeIdx int, c ceiling) {
	r.ceilings[shapeIdx] = append(r.ceilings[shapeIdx], c)
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
	var xs []float64
	for _, round := range r.samples[si] {
		sa, okA := round[a]
		sb, okB := round[b]
		if okA && okB && f(sb) != 0 {
			xs = append(xs, f(sa)/f(sb))
		}
	}
	return median(xs)
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
	// batchSuffix marks lease with Options.Batching on (plain go-redis client).
	batchSuffix = " + batching"
	// singleSuffix marks lease with Options.NoCoalescing: one command per round trip.
	singleSuffix = " + single commands"
)

// fastestPeer and leanestPeer pick by median.
func (r *report) fastestPeer(si int) string {
	best, bestV := "", -1.0
	for _, v := range r.variants {
		if m := median(r.series(si, v.name, sample.cyclesPerSec)); isPeer(v.name) && m > bestV {
			best, bestV = v.name, m
		}
	}
	return best
}

func (r *report) leanestPeer(si int) string {
	best, bestV := "", math.Inf(1)
	for _, v := range r.variants {
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
	w("\nSettings: %d goroutines (and %d redis-benchmark clients), %d rounds × %s per variant and shape, "+
		"variants in rotated order each round; every figure is the median over rounds, ratios are "+
		"medians of per-round ratios.\n\n", r.cfg.goroutines, r.cfg.goroutines, r.cfg.rounds, r.cfg.duration)

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

func (r *report) lockTables(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Lock + unlock cycles\n\n")
	w("One attempt = one try-once acquire; when it succeeds, the release follows and the attempt " +
		"counts as a cycle. With distinct keys every attempt is a cycle. ns, CPU, allocs and B are per attempt; " +
		"client CPU is this process's user+system time (the benchmark's own loop included), which other " +
		"processes on the machine disturb far less than wall time.\n\n")
	for si, s := range shapes {
		fastest := r.fastestPeer(si)
		ceil := median(mapCeil(r.ceilings[si], ceiling.cyclesPerSec))
		w("### %s\n\n", s.name)
		w("| variant | cycles/s | attempts/s | ns/attempt | client CPU ns/attempt | allocs/op | B/op | cycles/s vs %s | of ceiling | spread | errors |\n", fastest)
		w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, v := range r.variants {
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
		w("| **ceiling**, one command per round trip (redis-benchmark -c %d) | %.0f | %.0f | %.0f | | | | | 100%% | | |\n",
			r.cfg.goroutines, ceil, get(func(c ceiling) float64 { return c.setRPS }), 1e9/ceil)
		w("| **pipelined ceiling**, one connection %d deep (-c 1 -P %d) | %.0f | %.0f | %.0f | | | | | %.0f%% | | |\n\n",
			r.cfg.goroutines, r.cfg.goroutines, piped, get(func(c ceiling) float64 { return c.pipedSetRPS }), 1e9/piped, 100*piped/ceil)
		w("Ceiling commands (requests/s): SET NX PX %.0f, EVALSHA compare-and-delete %.0f; pipelined %.0f and %.0f. "+
			"The ceilings' attempts/s column is SET NX PX alone.\n\n",
			get(func(c ceiling) float64 { return c.setRPS }), get(func(c ceiling) float64 { return c.evalRPS }),
			get(func(c ceiling) float64 { return c.pipedSetRPS }), get(func(c ceiling) float64 { return c.pipedEvalRPS }))
		for _, v := range r.variants {
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
	fmt.Fprint(b, "## Targets\n\n| target | measured | verdict |\n|---|---|---|\n")
	if r.hasVariant(leaseOn) {
		for si, s := range shapes {
			r.shapeTargets(b, si, s)
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

func (r *report) hasVariant(name string) bool {
	return slices.ContainsFunc(r.variants, func(v variant) bool { return v.name == name })
}

// peerMarks are what a lease variant is set against in one shape: the fastest peer's cycles/s
// and the leanest peer's allocs/op.
type peerMarks struct {
	fastest, leanest string
	leanestAllocs    float64
}

// shapeTargets are lease's rows for one shape: the default client against the peers, against
// its other ways of sending commands and, for reference, on go-redis's AutoPipeline face.
func (r *report) shapeTargets(b *strings.Builder, si int, s shape) {
	fastest := r.fastestPeer(si)
	if fastest == "" {
		return
	}
	leanest := r.leanestPeer(si)
	marks := peerMarks{fastest, leanest, median(r.series(si, leanest, sample.allocsPerAttempt))}
	r.peerTargets(b, si, s, leaseOn, leaseOn, marks)
	r.eachPeerRow(b, si, s)
	if single := leaseOn + singleSuffix; r.hasVariant(single) {
		fmt.Fprintf(b, "| %s: %s (default, coalescing) cycles/s vs %s (Options.NoCoalescing, same run) | %.2f× | |\n",
			s.name, leaseOn, single, r.paired(si, leaseOn, single, sample.cyclesPerSec))
	}
	if batching := leaseOn + batchSuffix; r.hasVariant(batching) {
		r.peerTargets(b, si, s, batching, batching+" (opt-in Options.Batching)", marks)
		fmt.Fprintf(b, "| %s: %s cycles/s vs %s (same run) | %.2f× | |\n",
			s.name, batching, leaseOn, r.paired(si, batching, leaseOn, sample.cyclesPerSec))
	}
	if auto := leaseOn + autoSuffix; r.hasVariant(auto) {
		fmt.Fprintf(b, "| %s, reference only: %s cycles/s vs %s | %.2f× | not a supported lease configuration (deadlines, see performance.md) |\n",
			s.name, auto, fastest, r.paired(si, auto, fastest, sample.cyclesPerSec))
	}
}

// peerTargets are the two targets of the lease variant name: cycles/s at least the fastest
// peer's (the row calls it label) and allocs/op at most the leanest peer's.
func (r *report) peerTargets(b *strings.Builder, si int, s shape, name, label string, m peerMarks) {
	ratio := r.paired(si, name, m.fastest, sample.cyclesPerSec)
	fmt.Fprintf(b, "| %s: %s cycles/s ≥ fastest peer (%s) | %.2f× | %s |\n",
		s.name, label, m.fastest, ratio, verdict(ratio >= 1, ratio >= 0.97))
	allocs := median(r.series(si, name, sample.allocsPerAttempt))
	fmt.Fprintf(b, "| %s: %s allocs/op ≤ leanest peer (%s) | %.1f vs %.1f | %s |\n",
		s.name, name, m.leanest, allocs, m.leanestAllocs, verdict(allocs <= m.leanestAllocs, false))
}

func (r *report) eachPeerRow(b *strings.Builder, si int, s shape) {
	var each []string
	for _, v := range r.variants {
		if isPeer(v.name) {
			each = append(each, fmt.Sprintf("%s %.2f×", v.name, r.paired(si, leaseOn, v.name, sample.cyclesPerSec)))
		}
	}
	fmt.Fprintf(b, "| %s: %s cycles/s vs each peer | %s | |\n", s.name, leaseOn, strings.Join(each, ", "))
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
