package exporter

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
)

// BuildVersion is prometheus/common/version's Version, which make build and make release set
// with -ldflags -X; else the module version go install recorded; else "devel".
func BuildVersion() string {
	if version.Version != "" {
		return version.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// NewBuildInfoCollector is lock_exporter_build_info from prometheus/common/version: constant 1,
// labelled version, revision, branch, goversion, goos, goarch and tags. The version label is
// BuildVersion's, so a build without -ldflags says "devel" rather than "".
func NewBuildInfoCollector() prometheus.Collector {
	return versioncollector.NewCollector("lock_exporter",
		versioncollector.WithExtraConstLabels(prometheus.Labels{"version": BuildVersion()}))
}
