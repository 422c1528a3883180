package main

import "github.com/lockwatch/lockwatch/internal/exporter"

// version and revision are set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.revision=$(git rev-parse HEAD)" ./cmd/lock-exporter
var (
	version  = ""
	revision = ""
)

// buildVersion is the -X version, else the module version go install recorded, else "devel".
func buildVersion() string { return exporter.BuildVersion(version) }

// buildRevision is the -X revision, else the VCS revision go build stamped, else "unknown".
func buildRevision() string { return exporter.BuildRevision(revision) }
