package ruletests

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// scenario is one promtool test group: input series over a timeline and the alerts they must
// produce.
type scenario struct {
	name   string // what it shows, e.g. "twice the threshold fires, half does not"
	tl     timeline
	series []inputSeries
	expect []expected
}

type inputSeries struct {
	metric string
	labels map[string]string
	values samples
}

func (s inputSeries) String() string {
	return s.metric + labels.FromMap(s.labels).String()
}

func (sc *scenario) add(metric string, lbls map[string]string, values samples) {
	sc.series = append(sc.series, inputSeries{metric: metric, labels: lbls, values: values})
}

// with returns a copy of lbls (which may be nil) plus the given label pairs.
func with(lbls map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(lbls)+len(kv)/2)
	maps.Copy(out, lbls)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// keep returns the labels of lbls named in names (those it has), plus severity: the labels an
// alert keeps after aggregating by names.
func keep(lbls map[string]string, severity string, names ...string) map[string]string {
	out := map[string]string{"severity": severity}
	for _, n := range names {
		if v, ok := lbls[n]; ok {
			out[n] = v
		}
	}
	return out
}

// allBut returns lbls plus severity: the labels of an alert on a series as it is.
func allBut(lbls map[string]string, severity string) map[string]string {
	return with(lbls, "severity", severity)
}

// sampleStep is the scrape and evaluation interval of the scenarios: a minute, or less where a
// configured window is not a whole number of minutes or holds fewer than four samples of a
// minute, so that every window holds whole samples and enough of them for a rate.
func sampleStep(cfg packconfig.Config) time.Duration {
	ws := windows(cfg)
	step := time.Minute
	for _, w := range ws {
		step = gcd(step, w)
	}
	shortest := slices.Min(ws)
	for step > time.Second && shortest < 4*step {
		next := step - time.Second
		for step%next != 0 {
			next -= time.Second
		}
		step = next
	}
	return step
}

// windows are every rate window the alerts read.
func windows(cfg packconfig.Config) []time.Duration {
	a := cfg.Alerts
	ds := []model.Duration{
		a.NotOwnedRatio.Fast.Long, a.NotOwnedRatio.Fast.Short, a.NotOwnedRatio.Slow.Long, a.NotOwnedRatio.Slow.Short,
		a.RenewalFailureRatio.Fast.Long, a.RenewalFailureRatio.Fast.Short, a.RenewalFailureRatio.Slow.Long, a.RenewalFailureRatio.Slow.Short,
		a.Abandonments.Long, a.Abandonments.Short, a.WaitP99.Long, a.WaitP99.Short,
		a.FencedWriteRejectionRatio.Long, a.FencedWriteRejectionRatio.Short,
		a.LapseRatio.Long, a.LapseRatio.Short, a.TakeoverRatio.Long, a.TakeoverRatio.Short,
	}
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(d)
	}
	return out
}

func gcd(a, b time.Duration) time.Duration {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// timelineTo is the timeline long enough for the latest time given plus a margin of a few samples.
func (g *gen) timelineTo(last time.Duration) timeline {
	return timeline{step: g.step, n: int(roundUp(last, g.step)/g.step) + 3}
}
