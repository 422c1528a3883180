// Command lockwatch-pack generates lockwatch's monitoring pack: the Prometheus recording and
// alerting rules in alerts/, the Grafana dashboards in dashboards/, and the Kubernetes
// PrometheusRule and dashboard ConfigMaps in deploy/kubernetes/.
//
// Usage:
//
//	lockwatch-pack [--config FILE] [--out DIR] [--print-config]
//
// With no --config the output is the committed pack. --config names a YAML file of overrides:
// only the keys given change, unknown keys are an error (see internal/packconfig). --out is the
// root the files are written under (alerts/…, dashboards/…, deploy/kubernetes/…); it defaults to the root of the
// lockwatch checkout containing the working directory. --print-config prints the effective
// configuration, every key with its value, as a starting point for an overrides file.
//
// It prints one line per file, "updated" or "unchanged", and a count, so `make generate` says
// what it changed. docs/pack.md documents every setting.
//
// Exit status: 0 on success, 2 for a bad flag or configuration, 1 when writing fails.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/internal/packconfig"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("lockwatch-pack", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "YAML file of overrides to the default pack configuration")
	out := fs.String("out", "", "root directory to write alerts/ and dashboards/ under (default: the lockwatch checkout's root)")
	printConfig := fs.Bool("print-config", false, "print the effective configuration as YAML and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: lockwatch-pack [--config FILE] [--out DIR] [--print-config]\n%s", fs.FlagUsages())
			return 0
		}
		fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lockwatch-pack: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	cfg := packconfig.Default()
	if *configPath != "" {
		var err error
		if cfg, err = packconfig.Load(*configPath); err != nil {
			fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
			return 2
		}
	}
	if *printConfig {
		data, err := cfg.YAML()
		if err != nil {
			fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
			return 1
		}
		_, _ = stdout.Write(data)
		return 0
	}

	root := *out
	if root == "" {
		var err error
		if root, err = checkoutRoot(); err != nil {
			fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
			return 2
		}
	}
	if err := writePack(cfg, root, stdout); err != nil {
		fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
		return 1
	}
	return 0
}
