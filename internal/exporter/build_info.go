package exporter

import "runtime/debug"

// BuildVersion is override (a -X linker setting), else the module version go install
// recorded, else "devel".
func BuildVersion(override string) string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// BuildRevision is override (a -X linker setting), else the VCS revision go build stamped,
// else "unknown".
func BuildRevision(override string) string {
	if override != "" {
		return override
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
