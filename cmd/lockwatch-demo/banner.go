package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/demo"
)

// announce tells the test harness where the demo listens, then prints the banner.
func announce(e *cli.Env, w *demo.Workload, target redisTarget, addrs []string) {
	if e.Listening != nil {
		e.Listening(addrs)
	}
	printBanner(e, w, redactURL(target.addr), target.where, addrs)
}

func printBanner(e *cli.Env, w *demo.Workload, redisAddr, where string, addrs []string) {
	fmt.Fprintf(e.Stdout, "lockwatch demo\n  Redis:   %s (%s)\n", redisAddr, where)
	for _, a := range addrs {
		fmt.Fprintf(e.Stdout, "  metrics: http://%s/metrics   (lease library + exporter metrics on one endpoint)\n", a)
	}
	fmt.Fprintf(e.Stdout, "  keys:    %s*\n  namespaces:\n", w.Prefix())
	for _, ns := range w.Namespaces() {
		fmt.Fprintf(e.Stdout, "    %-10s %s\n", ns.Name, ns.Story)
	}
	for _, l := range append(w.StatusLegend(), demo.NextSteps(redisAddr, addrs[0], exporterCommand(), w.Namespaces())...) {
		fmt.Fprintln(e.Stdout, l)
	}
	fmt.Fprintln(e.Stdout, "Ctrl-C stops the demo.")
}

// redactURL hides the password of a redis:// address, which must not reach a terminal or log.
func redactURL(addr string) string {
	if !strings.Contains(addr, "://") {
		return addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// exporterCommand is how to run lock-exporter from here: the binary `make demo` builds beside
// this one (bin/lock-exporter), by the path that reaches it from the working directory, else
// `go run ./cmd/lock-exporter`, which works from the repository root.
func exporterCommand() string {
	self, err := os.Executable()
	if err != nil {
		return goRunExporter
	}
	wd, _ := os.Getwd()
	return exporterCommandFor(self, wd)
}

// exporterCommandFor is exporterCommand for the demo binary self run from the directory wd.
func exporterCommandFor(self, wd string) string {
	path := filepath.Join(filepath.Dir(self), "lock-exporter")
	if _, err := os.Stat(path); err != nil {
		return goRunExporter
	}
	if rel, err := filepath.Rel(wd, path); wd != "" && err == nil && !strings.HasPrefix(rel, "..") {
		return "./" + rel
	}
	return path
}

const goRunExporter = "go run ./cmd/lock-exporter"
