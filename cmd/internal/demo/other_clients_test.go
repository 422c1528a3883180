package demo

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestOtherClientWorkersReportTheirLapses runs one process of each other-language service on
// one key, every second hold lapsing: each hold is settled once, as released or refused as not
// owned, and every lapsing hold is refused (its lock expired under the job, as the client then
// tells its application). A healthy hold that a starved machine delays past its lease may be
// refused too, so that count is a lower bound.
func TestOtherClientWorkersReportTheirLapses(t *testing.T) {
	for _, ns := range otherClientNamespaces("t:") {
		t.Run(ns.Name, func(t *testing.T) {
			t.Parallel()
			rdb := redistest.Start(t).Client(t)
			o := &otherClientWorker{name: ns.Name + "-b", ns: ns, rdb: rdb, clientID: "c", keys: otherClientKeys(ns)[:1], lapseEvery: 2}
			const holds = 4
			for o.holds < holds {
				if err := o.holdOnce(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			acquired, released, notOwned := o.tally.acquired.Load(), o.tally.released.Load(), o.tally.notOwned.Load()
			if acquired != holds || released+notOwned != holds || notOwned < holds/2 {
				t.Errorf("%d holds: %d acquired, %d released, %d refused as not owned; want every hold settled once and at least %d refused",
					holds, acquired, released, notOwned, holds/2)
			}
			if n := rdb.Exists(t.Context(), o.keys[0]).Val(); n != 0 {
				t.Errorf("the key outlived the worker's last hold")
			}
		})
	}
}

// TestOtherClientNamespacesAreTheirOwn: the redis-py and Redisson processes write only keys of
// their own namespaces, of the type the exporter is told to read there.
func TestOtherClientNamespacesAreTheirOwn(t *testing.T) {
	srv := redistest.Start(t)
	w, err := New(Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(w.others) != 4 {
		t.Fatalf("%d other-client processes, want two per service", len(w.others))
	}
	rdb := srv.Client(t)
	for _, o := range w.others {
		for _, key := range o.keys {
			if !strings.HasPrefix(key, strings.TrimSuffix(o.ns.Pattern, "*")) {
				t.Errorf("%s takes %s, outside its namespace's pattern %s", o.name, key, o.ns.Pattern)
			}
		}
		o.keys = o.keys[:1]
		o.lapseEvery = 0
		if err := typeWhileHeld(t, o, rdb); err != nil {
			t.Error(err)
		}
	}
}

// typeWhileHeld takes one hold of o and checks its key's type while the job runs against the
// namespace's declared types (none: string).
func typeWhileHeld(t *testing.T, o *otherClientWorker, rdb *redis.Client) error {
	t.Helper()
	want := "string"
	if len(o.ns.Types) > 0 {
		want = o.ns.Types[0]
	}
	seen := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if typ := rdb.Type(context.Background(), o.keys[0]).Val(); typ != "none" {
				seen <- typ
				return
			}
			time.Sleep(time.Millisecond)
		}
		seen <- "none"
	}()
	if err := o.holdOnce(t.Context()); err != nil {
		return err
	}
	if typ := <-seen; typ != want {
		t.Errorf("%s's key is a %s while held, want %s", o.name, typ, want)
	}
	return nil
}

// TestReadLifecycleSumsWhatTheExporterServes serves real counters over HTTP: lapses and
// takeovers are summed over the namespaces, except one declared to end by expiry, and one
// namespace not followed makes the whole not followed.
func TestReadLifecycleSumsWhatTheExporterServes(t *testing.T) {
	tests := []struct {
		name string
		seed func(r *prometheus.Registry)
		want Lifecycle
	}{
		{"no lifecycle series", func(*prometheus.Registry) {}, Lifecycle{}},
		{"followed", func(r *prometheus.Registry) {
			serveLifecycle(r, map[string]nsLifecycle{
				"redispy":    {expired: 3, takeovers: 2, following: 1},
				"redisson":   {expired: 1, takeovers: 1, following: 1},
				"reconciler": {expired: 40, takeovers: 40, following: 1, byExpiry: 1},
			})
		}, Lifecycle{Followed: true, Lapses: 4, Takeovers: 3}},
		{"one namespace not followed", func(r *prometheus.Registry) {
			serveLifecycle(r, map[string]nsLifecycle{
				"redispy":  {expired: 3, takeovers: 2, following: 1},
				"redisson": {expired: 1, takeovers: 1, following: 0},
			})
		}, Lifecycle{Lapses: 4, Takeovers: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			tt.seed(reg)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
			go func() { _ = srv.Serve(l) }()
			defer srv.Close()
			got, err := ReadLifecycle(t.Context(), "http://"+l.Addr().String()+"/metrics")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ReadLifecycle = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// nsLifecycle are one namespace's lifecycle series as the exporter serves them.
type nsLifecycle struct {
	expired, takeovers, following, byExpiry float64
}

// serveLifecycle registers the exporter's lifecycle series for namespaces on r, with a deleted
// end beside each expired one so the reason label has more than one value.
func serveLifecycle(r *prometheus.Registry, namespaces map[string]nsLifecycle) {
	ends := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lock_key_ends_total", Help: "ends"}, []string{"lock_namespace", "reason"})
	takeovers := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lock_key_takeovers_total", Help: "takeovers"}, []string{"lock_namespace"})
	following := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lock_exporter_lifecycle_following", Help: "following"}, []string{"lock_namespace"})
	byExpiry := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lock_exporter_lifecycle_ends_by_expiry", Help: "by expiry"}, []string{"lock_namespace"})
	r.MustRegister(ends, takeovers, following, byExpiry)
	for ns, v := range namespaces {
		ends.WithLabelValues(ns, "expired").Add(v.expired)
		ends.WithLabelValues(ns, "deleted").Add(100)
		takeovers.WithLabelValues(ns).Add(v.takeovers)
		following.WithLabelValues(ns).Set(v.following)
		byExpiry.WithLabelValues(ns).Set(v.byExpiry)
	}
}
