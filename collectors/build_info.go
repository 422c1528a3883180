package collectors

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// NewBuildInfoCollector returns lock_exporter_build_info, constant 1, labelled with the
// exporter's version and revision and the Go version it was built with.
func NewBuildInfoCollector(version, revision string) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lock_exporter_build_info",
		Help: "Constant 1, labelled with the lock-exporter build's version, revision and Go version.",
		ConstLabels: prometheus.Labels{
			"version":   version,
			"revision":  revision,
			"goversion": runtime.Version(),
		},
	}, func() float64 { return 1 })
}
