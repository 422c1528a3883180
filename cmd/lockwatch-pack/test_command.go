package main

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/ruletests"
)

// testUsage is the first line of `lockwatch-pack test --help`.
const testUsage = "Usage: lockwatch-pack test [--out DIR] [--promtool PATH]"

// errNoPromtool is returned when promtool cannot be found; the rule tests need it to run.
var errNoPromtool = errors.New("promtool not found")

// testOptions are the flags of the test subcommand.
type testOptions struct {
	out      string
	promtool string
}

// runTest is `lockwatch-pack test`: it runs promtool over the rule tests a previous run wrote
// under --out (alerts/tests/*_test.yml), passing promtool's report through. Exit status: 0 when
// they pass, 1 when they fail or promtool cannot run, 2 for a bad flag or a pack without tests.
func runTest(args []string, stdout, stderr io.Writer) int {
	opts, usage, err := parseTestFlags(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "%s\nRuns promtool over the rule tests lockwatch-pack wrote under DIR/%s.\n%s", testUsage, ruletests.Dir, usage)
		return 0
	}
	if err != nil {
		return fail(stderr, err, 2)
	}
	root, err := outputRoot(opts.out)
	if err != nil {
		return fail(stderr, err, 2)
	}
	files, err := ruleTestFiles(root)
	if err != nil {
		return fail(stderr, err, 2)
	}
	promtool, err := findPromtool(opts.promtool)
	if err != nil {
		return fail(stderr, err, 1)
	}
	cmd := exec.Command(promtool, append([]string{"test", "rules"}, files...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fail(stderr, fmt.Errorf("rule tests under %s failed (%s test rules: %w)", filepath.Join(root, filepath.FromSlash(ruletests.Dir)), promtool, err), 1)
	}
	return 0
}

func parseTestFlags(args []string) (testOptions, string, error) {
	var opts testOptions
	fs := pflag.NewFlagSet("lockwatch-pack test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.out, "out", "", "root directory the pack was written under (default: the lockwatch checkout's root; required outside one)")
	fs.StringVar(&opts.promtool, "promtool", "", "promtool to run (default: promtool on PATH)")
	if err := fs.Parse(args); err != nil {
		return opts, fs.FlagUsages(), err
	}
	if fs.NArg() > 0 {
		return opts, "", fmt.Errorf("test: unexpected argument %q", fs.Arg(0))
	}
	return opts, "", nil
}

// ruleTestFiles are the rule test files under root, sorted; an error when there are none, which
// means the pack there was not written by a lockwatch-pack that writes them.
func ruleTestFiles(root string) ([]string, error) {
	dir := filepath.Join(root, filepath.FromSlash(ruletests.Dir))
	files, err := filepath.Glob(filepath.Join(dir, "*_test.yml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no rule tests in %s: write the pack there first (lockwatch-pack --out %s)", dir, root)
	}
	slices.Sort(files)
	return files, nil
}

// findPromtool returns the promtool to run: the one named, or the one on PATH.
func findPromtool(named string) (string, error) {
	if named == "" {
		path, err := exec.LookPath("promtool")
		if err != nil {
			return "", fmt.Errorf("%w on PATH: install Prometheus's promtool (3.x, or 2.x) or name it with --promtool", errNoPromtool)
		}
		return path, nil
	}
	path, err := exec.LookPath(named)
	if err != nil {
		return "", fmt.Errorf("%w: --promtool %s: %v", errNoPromtool, named, errors.Unwrap(err))
	}
	return path, nil
}
