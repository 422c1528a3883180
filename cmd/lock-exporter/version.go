package main

import "runtime/debug"

// version and revision are set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.revision=$(git rev-parse HEAD)" ./cmd/lock-exporter
var (
	version  = ""
	revision = ""
)

// buildVersion is the -X version, else the module version go install recorded, else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// buildRevision is the -X revision, else the VCS revision go build stamped, else "unknown".
func buildRevision() string {
	if revision != "" {
		return revision
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
