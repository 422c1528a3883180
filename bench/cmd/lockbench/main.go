// Command lockbench measures lock + unlock cycles of lockwatch's lease library and its peers
// (bsm/redislock, redsync, rueidislock) against one redis-server it starts, next to the
// redis-benchmark ceiling for the same commands, optionally runs the exporter's scrape
// benchmark, and writes the results as Markdown. `make bench` runs it. Flags pick one of the
// exporter's measurements instead (modes.go).
package main

import (
	"fmt"
	"os"
)

func main() {
	cfg, h := parseFlags()
	if h.run() {
		return
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench: %v\n", err)
		os.Exit(2)
	}
	if err := runMeasurement(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench: %v\n", err)
		os.Exit(1)
	}
}

// runMeasurement runs the measurement the flags pick, the lock benchmark by default.
func runMeasurement(cfg config) error {
	switch {
	case cfg.lockOwn:
		return runLockOwn(cfg)
	case cfg.indexCmp:
		return runIndexCmp(cfg)
	case cfg.exporterCmp:
		return runComparison(cfg)
	}
	return runAll(cfg)
}

// run runs the helper mode the flags ask for, if any, and reports whether it did.
func (h helperModes) run() bool {
	var err error
	switch {
	case h.cpuHog:
		runHog(h.hogCPU)
		return true
	case h.serveLine != "":
		if err = serveDelayLine(os.Stdin, os.Stdout, h.serveLine, h.lineOneWay); err != nil {
			err = fmt.Errorf("delay line: %w", err)
		}
	case h.serveIndex != "":
		if err = serveIndex(os.Stdin, os.Stdout, h.serveIndex, h.serveIndexMode, h.serveIndexBackstop); err != nil {
			err = fmt.Errorf("index: %w", err)
		}
	default:
		return false
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockbench %v\n", err)
		os.Exit(1)
	}
	return true
}
