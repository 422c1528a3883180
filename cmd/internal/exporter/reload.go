package exporter

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// ReloadPath reloads the configuration on POST, as Prometheus' and blackbox_exporter's do.
const ReloadPath = "/-/reload"

// reloader reads the configuration again and swaps in what it describes. Reloads are serialised:
// a SIGHUP and a POST arriving together run one after the other.
type reloader struct {
	mu      sync.Mutex
	read    func() (Scope, error)
	live    *liveGeneration
	deps    generationDeps
	metrics reloadMetrics
	logger  *slog.Logger
}

// errNoReload: the exporter was started without a way to read its configuration again.
var errNoReload = errors.New("this exporter cannot reload its configuration")

// reload reads the configuration and, when it is valid and opens, serves it from now on;
// otherwise the previous configuration stays served. The error names what was wrong, with any
// URL password redacted.
func (r *reloader) reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.read == nil {
		return errNoReload
	}
	next, err := r.next()
	if err != nil {
		r.metrics.failed()
		err = errors.New(exporterconfig.RedactMessage(err.Error()))
		r.logger.Error("configuration reload failed; serving the previous configuration", "err", err)
		return err
	}
	r.deps.targets.track(next.targetNames)
	r.deps.limiter.setLimit(next.scope.Config.MaxConcurrentTargetScans())
	r.live.swap(next)
	r.metrics.succeeded(time.Now())
	r.logger.Info("configuration reloaded", describeScope(next.scope)...)
	return nil
}

func (r *reloader) next() (*generation, error) {
	scope, err := r.read()
	if err != nil {
		return nil, err
	}
	return newGeneration(scope, r.deps)
}

// ServeHTTP reloads on POST and answers when the reload is done: 200, or 500 with the reason on
// one line while the previous configuration stays served.
func (r *reloader) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST to reload the configuration", http.StatusMethodNotAllowed)
		return
	}
	if err := r.reload(); err != nil {
		http.Error(w, fmt.Sprintf("reload failed, previous configuration kept: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "configuration reloaded")
}

// describeScope is the log attributes of a scope: what it scans.
func describeScope(s Scope) []any {
	redis := "none (targets only)"
	if !s.TargetsOnly {
		redis = s.Config.Redis.Describe()
	}
	return []any{"namespaces", len(s.Config.Namespaces), "redis", redis, "targets", len(s.Config.Targets)}
}

// reloadMetrics tell whether the configuration served is the one on disk, as
// prometheus_config_last_reload_successful does for Prometheus.
type reloadMetrics struct {
	successful prometheus.Gauge
	lastOK     prometheus.Gauge
}

func newReloadMetrics(reg prometheus.Registerer) reloadMetrics {
	m := reloadMetrics{
		successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lock_exporter_config_last_reload_successful",
			Help: "1 when the last configuration load (at start, on SIGHUP or POST /-/reload) succeeded, 0 when it failed and the previous configuration is still served.",
		}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lock_exporter_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load.",
		}),
	}
	reg.MustRegister(m.successful, m.lastOK)
	return m
}

func (m reloadMetrics) succeeded(at time.Time) {
	m.successful.Set(1)
	m.lastOK.Set(float64(at.UnixNano()) / 1e9)
}

func (m reloadMetrics) failed() { m.successful.Set(0) }
