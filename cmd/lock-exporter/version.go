package main

import (
	"fmt"
	"io"

	"github.com/prometheus/common/version"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
)

// stampVersion fills prometheus/common/version's Version when -ldflags did not (go build, go
// install), so --version and the landing page agree with lock_exporter_build_info. The Makefile
// stamps Version, Revision, Branch, BuildUser and BuildDate:
//
//	go build -ldflags "-X github.com/prometheus/common/version.Version=v0.1.0 \
//	  -X github.com/prometheus/common/version.Revision=$(git rev-parse HEAD)" ./cmd/lock-exporter
//
// main calls it before anything else runs, as the linker would have set it.
func stampVersion() {
	version.Version = exporter.BuildVersion()
}

// printVersion is --version: prometheus/common/version's report (version, branch, revision,
// build user and date, Go version, platform, tags).
func printVersion(w io.Writer) {
	fmt.Fprintln(w, version.Print("lock-exporter"))
}
