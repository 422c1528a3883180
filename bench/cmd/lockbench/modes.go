package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The measurements lockbench runs instead of the lock benchmark, each writing its Markdown to
// -out (stdout by default).

func runComparison(cfg config) error {
	var sizes []int
	for _, f := range strings.Split(cfg.cmpSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 3 {
			return fmt.Errorf("-comparison-sizes %q: want lock key counts of at least 3", cfg.cmpSizes)
		}
		sizes = append(sizes, n)
	}
	if cfg.cmpRounds < 1 {
		return fmt.Errorf("-comparison-rounds must be positive")
	}
	results, ver, err := runExporterComparison(context.Background(), sizes, cfg.cmpRounds, os.Stderr)
	if err != nil {
		return err
	}
	return writeMarkdown(cfg.out, comparisonMarkdown(results, cfg.cmpRounds, ver))
}

func runIndexCmp(cfg config) error {
	ic := cfg.index
	if ic.otherKeys < 0 || ic.locks < 1 || ic.intervals < 1 || ic.interval <= 0 || ic.otherWrites < 1 {
		return fmt.Errorf("-index-other-keys must not be negative; -index-locks, -index-intervals, -index-interval and -index-other-writes must be positive")
	}
	runs, ver, err := runIndexComparison(context.Background(), ic, os.Stderr)
	if err != nil {
		return err
	}
	return writeMarkdown(cfg.out, indexComparisonMarkdown(runs, ic, ver))
}

func runLockOwn(cfg config) error {
	ic, oc := cfg.index, cfg.own
	for _, f := range strings.Split(cfg.lockOwnRates, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-lock-own-rates %q: want positive operations a second", cfg.lockOwnRates)
		}
		oc.rates = append(oc.rates, n)
	}
	if ic.otherKeys < 0 || ic.locks < 1 || oc.rounds < 1 || oc.window < time.Second {
		return fmt.Errorf("-index-other-keys must not be negative, -index-locks and -lock-own-rounds positive, -lock-own-window at least 1s")
	}
	var err error
	if oc.self, err = os.Executable(); err != nil {
		return err
	}
	if oc.before != "" {
		if _, err := os.Stat(oc.before); err != nil {
			return fmt.Errorf("-lock-own-before: %w", err)
		}
	}
	results, ver, err := runLockOwnCost(context.Background(), ic, oc, os.Stderr)
	if err != nil {
		return err
	}
	return writeMarkdown(cfg.out, lockOwnMarkdown(results, ic, oc, ver))
}

// writeMarkdown writes md to the file out, creating its directory, or to stdout when out is
// empty.
func writeMarkdown(out, md string) error {
	if out == "" {
		_, err := os.Stdout.WriteString(md)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(md), 0o644)
}
