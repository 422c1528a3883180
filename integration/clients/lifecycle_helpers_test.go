package clients_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
)

// endReasons are the values of lock_key_ends_total's reason label, each exported from 0.
var endReasons = []string{"deleted", "expired", "evicted", "overwritten", "unknown"}

// lifecycle is one namespace's lifecycle series as a scrape of the exporter exports them.
type lifecycle struct {
	acquisitions, takeovers, renewals float64
	ends                              map[string]float64 // by reason
	following                         float64
}

// counts formats the counters, every reason included, for comparison and for failure messages.
func (l lifecycle) counts() string {
	var b strings.Builder
	fmt.Fprintf(&b, "acquisitions=%v takeovers=%v renewals=%v ends:", l.acquisitions, l.takeovers, l.renewals)
	for _, r := range endReasons {
		fmt.Fprintf(&b, " %s=%v", r, l.ends[r])
	}
	return b.String()
}

// exceeding names the counters of l that are above those of limit.
func (l lifecycle) exceeding(limit lifecycle) []string {
	var over []string
	check := func(name string, got, max float64) {
		if got > max {
			over = append(over, fmt.Sprintf("%s %v > %v", name, got, max))
		}
	}
	check("acquisitions", l.acquisitions, limit.acquisitions)
	check("takeovers", l.takeovers, limit.takeovers)
	check("renewals", l.renewals, limit.renewals)
	for _, r := range endReasons {
		check("ends{"+r+"}", l.ends[r], limit.ends[r])
	}
	return over
}

// shortOf names the counters of l that are below those of floor.
func (l lifecycle) shortOf(floor lifecycle) []string {
	var short []string
	for _, over := range floor.exceeding(l) {
		short = append(short, "truth > exporter: "+over)
	}
	return short
}

// fromTruth is what the exporter's counters should read for the clients' truth: every hold's
// acquisition (a takeover's included), a release as a deleted end, a lapse as an expired end.
func fromTruth(c clients.Counts) lifecycle {
	l := lifecycle{acquisitions: float64(c.Acquired), takeovers: float64(c.TakenOver), renewals: float64(c.Renewed),
		ends: map[string]float64{}}
	for _, r := range endReasons {
		l.ends[r] = 0
	}
	l.ends["deleted"] = float64(c.Released)
	l.ends["expired"] = float64(c.Lapsed)
	return l
}

// exporter is a collectors.Scanner reading one Redis, as lock-exporter runs it, scraped through
// a Prometheus registry.
type exporter struct {
	t       testing.TB
	scanner *collectors.Scanner
	names   []string
}

// startExporter starts a scanner of namespaces on the Redis at addr with the given feed and
// waits until every namespace follows its lifecycle.
func startExporter(t testing.TB, addr string, feed collectors.FeedSource, namespaces []collectors.Namespace) *exporter {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return startExporterOn(t, c, feed, namespaces)
}

// startExporterOn is startExporter reading through c (a Sentinel's failover client, say).
func startExporterOn(t testing.TB, c redis.UniversalClient, feed collectors.FeedSource, namespaces []collectors.Namespace) *exporter {
	t.Helper()
	s, err := collectors.NewScanner(c, collectors.Options{Namespaces: namespaces, Mode: collectors.ModeAuto, Feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	e := &exporter{t: t, scanner: s}
	for _, ns := range namespaces {
		e.names = append(e.names, ns.Name)
	}
	e.awaitFollowing()
	for name, l := range e.scrape() {
		if l.counts() != fromTruth(clients.Counts{}).counts() {
			t.Fatalf("%s after the build: %s, want all 0", name, l.counts())
		}
	}
	return e
}

// scrape gathers the exporter's metrics once and returns the lifecycle series of each of its
// namespaces; a namespace without them fails the test.
func (e *exporter) scrape() map[string]lifecycle {
	e.t.Helper()
	got, _ := e.gather()
	for _, name := range e.names {
		if _, ok := got[name]; !ok {
			e.t.Fatalf("no lifecycle series for namespace %s", name)
		}
	}
	return got
}

// gather scrapes once and returns the lifecycle series found (none before the first build) and
// lock_exporter_index_resyncs_total summed over its reasons.
func (e *exporter) gather() (map[string]lifecycle, float64) {
	e.t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e.scanner.Collector(context.Background())); err != nil {
		e.t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]lifecycle{}
	var resyncs float64
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if mf.GetName() == "lock_exporter_index_resyncs_total" {
				resyncs += m.GetCounter().GetValue()
				continue
			}
			recordSeries(out, mf.GetName(), labels, m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	return out, resyncs
}

// recordSeries folds one lifecycle sample into out; other metrics are ignored.
func recordSeries(out map[string]lifecycle, metric string, labels map[string]string, v float64) {
	ns := labels["lock_namespace"]
	l, ok := out[ns]
	if !ok {
		l.ends = map[string]float64{}
	}
	switch metric {
	case "lock_key_acquisitions_total":
		l.acquisitions = v
	case "lock_key_takeovers_total":
		l.takeovers = v
	case "lock_key_renewals_total":
		l.renewals = v
	case "lock_key_ends_total":
		l.ends[labels["reason"]] = v
	case "lock_exporter_lifecycle_following":
		l.following = v
	default:
		return
	}
	out[ns] = l
}

// awaitFollowing scrapes until every namespace's lifecycle_following is 1 and returns that
// scrape; the exporter builds its index, or resyncs, in the background.
func (e *exporter) awaitFollowing() map[string]lifecycle {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, _ := e.gather()
		if allFollowing(got, e.names) {
			return got
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("lifecycle not followed after 60s: %v", followingOf(got, e.names))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func allFollowing(got map[string]lifecycle, names []string) bool {
	for _, name := range names {
		if l, ok := got[name]; !ok || l.following != 1 {
			return false
		}
	}
	return true
}

func followingOf(got map[string]lifecycle, names []string) map[string]float64 {
	out := map[string]float64{}
	for _, name := range names {
		out[name] = got[name].following
	}
	return out
}

// truthOf sums the runner's truth over the keys of a namespace: those that begin with prefix.
func truthOf(r *clients.Runner, prefix string) clients.Counts {
	var total clients.Counts
	for _, key := range r.Truth().Keys() {
		if strings.HasPrefix(key, prefix) {
			total = total.Add(r.Truth().Counts(key))
		}
	}
	return total
}

// wantExact checks that the exporter's counters of namespace ns equal the clients' truth over
// the keys under prefix, in two subtests: "holds" (acquisitions, takeovers, ends by reason) and
// "renewals", so that a failure names which the exporter got wrong. It also fails when the
// truth itself is not exact.
func wantExact(t *testing.T, got map[string]lifecycle, ns string, r *clients.Runner, prefix string) {
	t.Helper()
	if err := r.Truth().Err(); err != nil {
		t.Errorf("the truth is not exact: %v", err)
	}
	want := fromTruth(truthOf(r, prefix))
	gotHolds, wantHolds := got[ns], want
	gotHolds.renewals, wantHolds.renewals = 0, 0
	t.Run("holds", func(t *testing.T) {
		if gotHolds.counts() != wantHolds.counts() {
			t.Errorf("namespace %s: the exporter counted\n  %s\nthe clients' truth is\n  %s\n%s", ns, got[ns].counts(), want.counts(), eventsOf(r, prefix))
		}
	})
	t.Run("renewals", func(t *testing.T) {
		if got[ns].renewals != want.renewals {
			t.Errorf("namespace %s: the exporter counted %v renewals, the clients' truth is %v\n%s", ns, got[ns].renewals, want.renewals, eventsOf(r, prefix))
		}
	})
}

// eventsOf lists the truth's events of each key under prefix, for failure messages.
func eventsOf(r *clients.Runner, prefix string) string {
	var b strings.Builder
	for _, key := range r.Truth().Keys() {
		if strings.HasPrefix(key, prefix) {
			fmt.Fprintf(&b, "  %s: %v\n", key, r.Truth().Events(key))
		}
	}
	return b.String()
}
