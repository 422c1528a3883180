package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// scrapeRow is one key count of collectors.BenchmarkScrape: its reported metrics by unit
// (ns/key, cmds/key, peak-heap-MiB, ceiling-ns/PTTL, x-ceiling, redis-cpu-ns/key, …).
type scrapeRow struct {
	keys    int
	metrics map[string]float64
}

// runScrapeBench runs the exporter's own benchmark in the main module, so the numbers are the
// ones `go test -bench` gives, and parses its result lines.
func runScrapeBench(root, benchtime string) ([]scrapeRow, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkScrape$",
		"-benchtime", benchtime, "-count", "1", "-timeout", "30m", "./collectors")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("collectors.BenchmarkScrape in %s: %w\n%s", root, err, out)
	}
	rows, err := parseScrape(out)
	if err != nil {
		return nil, fmt.Errorf("collectors.BenchmarkScrape: %w\n%s", err, out)
	}
	return rows, nil
}

func parseScrape(out []byte) ([]scrapeRow, error) {
	var rows []scrapeRow
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkScrape/keys=") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkScrape/keys=")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the -GOMAXPROCS suffix
		}
		keys, err := strconv.Atoi(name)
		if err != nil {
			return nil, fmt.Errorf("result line %q: key count: %w", sc.Text(), err)
		}
		row := scrapeRow{keys: keys, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("result line %q: %w", sc.Text(), err)
			}
			row.metrics[f[i+1]] = v
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no BenchmarkScrape/keys=… result lines")
	}
	return rows, sc.Err()
}
