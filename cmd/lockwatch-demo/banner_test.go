package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExporterCommand checks the inspect command the banner suggests is one that runs: the
// lock-exporter `make demo` builds beside the demo, by a path from the working directory, and
// `go run` when there is none (the demo built alone).
func TestExporterCommand(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(bin, "lockwatch-demo")
	if got := exporterCommandFor(self, root); got != goRunExporter {
		t.Errorf("no lock-exporter beside the demo: %q, want %q", got, goRunExporter)
	}
	if err := os.WriteFile(filepath.Join(bin, "lock-exporter"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for wd, want := range map[string]string{
		root:        "./bin/lock-exporter",
		bin:         "./lock-exporter",
		"/":         "." + filepath.Join(bin, "lock-exporter"),
		t.TempDir(): filepath.Join(bin, "lock-exporter"),
	} {
		if got := exporterCommandFor(self, wd); got != want {
			t.Errorf("from %s: %q, want %q", wd, got, want)
		}
	}
}
