// Command lockwatch-pack generates lockwatch's monitoring pack: the Prometheus recording and
// alerting rules in alerts/, the Grafana dashboards in dashboards/ (provisioning form) and
// dashboards-import/ (grafana.com import form), the Kubernetes PrometheusRule and dashboard
// ConfigMaps in deploy/kubernetes/, and the Helm chart in deploy/helm/lock-exporter/. A
// configuration that lists the lock namespaces and their Redis also gets, for them, the
// exporter's configuration file (deploy/lock-exporter/), the chart's values file and the
// exporter's Kubernetes manifests. Everything it writes is compiled in, so an installed binary
// needs no checkout:
//
//	go install github.com/lockwatch/lockwatch/cmd/lockwatch-pack@VERSION
//	lockwatch-pack --config my-pack.yml --out ./lockwatch-pack
//
// Usage:
//
//	lockwatch-pack [--config FILE] [--out DIR] [--force] [--print-config]
//
// With no --config the output is the committed pack. --config names a YAML file of overrides:
// only the keys given change, unknown keys are an error (see cmd/lockwatch-pack/internal/packconfig). --out is the
// root the files are written under (alerts/…, dashboards/…, deploy/…); it defaults to the root
// of the lockwatch checkout containing the working directory, and is required outside one.
// --print-config prints the effective configuration, every key with its value, as a starting
// point for an overrides file.
//
// Every file it writes says it is generated (JSON dashboards, which hold no comments, are
// listed in the record instead). Under --out it keeps a record of what it wrote,
// DIR/.lockwatch-pack.sum (the sha256 of each file), and refuses, in one line naming the
// files and changing nothing, to overwrite a file whose content it did not write there: a hand
// edit since the last run, or a same-named file of the user's before the first. --force
// overwrites them. Files it does not generate are never touched. Without --out, in a lockwatch
// checkout, git is the record: the committed pack is rewritten and its drift tests catch edits.
//
// It prints one line per file, "updated" or "unchanged", and a count, so `make generate` says
// what it changed. docs/pack.md documents every setting.
//
// Exit status: 0 on success, 2 for a bad flag or configuration, 1 when writing fails or is
// refused over a hand edit.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags.
type options struct {
	configPath  string
	out         string
	printConfig bool
	force       bool
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, usage, err := parseFlags(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: lockwatch-pack [--config FILE] [--out DIR] [--force] [--print-config]\n%s", usage)
		return 0
	}
	if err != nil {
		return fail(stderr, err, 2)
	}
	cfg, err := loadConfig(opts.configPath)
	if err != nil {
		return fail(stderr, err, 2)
	}
	if opts.printConfig {
		data, err := cfg.YAML()
		if err != nil {
			return fail(stderr, err, 1)
		}
		_, _ = stdout.Write(data)
		return 0
	}
	root, err := outputRoot(opts.out)
	if err != nil {
		return fail(stderr, err, 2)
	}
	guard := writeGuard{recorded: opts.out != "", force: opts.force}
	if err := writePack(cfg, root, guard, stdout); err != nil {
		return fail(stderr, err, 1)
	}
	return 0
}

// parseFlags parses the command line; it returns the flags' usage text for --help.
func parseFlags(args []string) (options, string, error) {
	var opts options
	fs := pflag.NewFlagSet("lockwatch-pack", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.configPath, "config", "", "YAML file of overrides to the default pack configuration")
	fs.StringVar(&opts.out, "out", "", "root directory to write the pack under: alerts/, dashboards/, dashboards-import/, deploy/ (default: the lockwatch checkout's root; required outside one)")
	fs.BoolVar(&opts.force, "force", false, "overwrite files changed since lockwatch-pack wrote them (or that it did not write), which it otherwise refuses to")
	fs.BoolVar(&opts.printConfig, "print-config", false, "print the effective configuration as YAML and exit")
	if err := fs.Parse(args); err != nil {
		return opts, fs.FlagUsages(), err
	}
	if fs.NArg() > 0 {
		return opts, "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return opts, "", nil
}

// loadConfig returns the defaults with the overrides of path applied, or the defaults when path
// is empty.
func loadConfig(path string) (packconfig.Config, error) {
	if path == "" {
		return packconfig.Default(), nil
	}
	return packconfig.Load(path)
}

// outputRoot is --out, or the checkout the working directory is in.
func outputRoot(out string) (string, error) {
	if out != "" {
		return out, nil
	}
	return checkoutRoot()
}

// fail reports err on one line and returns the exit status.
func fail(stderr io.Writer, err error, code int) int {
	fmt.Fprintf(stderr, "lockwatch-pack: %v\n", err)
	return code
}
