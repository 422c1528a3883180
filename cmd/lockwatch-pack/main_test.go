package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/helmchart"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/manifests"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/ruletests"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestCommittedPackIsGenerated is the drift test of the whole pack: every file the generators
// produce for the defaults is committed byte for byte, and the directories the pack owns hold no
// file the generators do not produce.
func TestCommittedPackIsGenerated(t *testing.T) {
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	stale, err := pack.Stale(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if slices.Contains(stale, f.Path) {
			committed, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
			t.Errorf("%s is out of date with the generator; run `make generate` and commit the result\n%s",
				f.Path, firstDifference(committed, f.Data))
		}
	}
	// The chart's directory is the generator's alone: every file in it, at any depth.
	var chartFiles []string
	err = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(helmchart.Dir)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			chartFiles = append(chartFiles, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, owned := range []string{rules.Dir + "/*.yml", ruletests.Dir + "/*.yml", dashboards.Dir + "/*.json", dashboards.ImportDir + "/*.json", manifests.Dir + "/*.yaml", ""} {
		onDisk := chartFiles
		if owned != "" {
			if onDisk, err = filepath.Glob(filepath.Join(root, filepath.FromSlash(owned))); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range onDisk {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				t.Fatal(err)
			}
			if rel = filepath.ToSlash(rel); !slices.ContainsFunc(files, func(f pack.File) bool { return f.Path == rel }) {
				t.Errorf("%s is not produced by the generator; delete it or run `make generate`", rel)
			}
		}
	}
}

func firstDifference(committed, generated []byte) string {
	c := strings.Split(string(committed), "\n")
	g := strings.Split(string(generated), "\n")
	for i := 0; i < max(len(c), len(g)); i++ {
		var cl, gl string
		if i < len(c) {
			cl = c[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if cl != gl {
			return fmt.Sprintf("first difference at line %d:\n  committed: %q\n  generated: %q", i+1, cl, gl)
		}
	}
	return "files differ"
}

// TestNoOverridesWritesTheCommittedPack: the command without --config writes the files committed
// in the checkout.
func TestNoOverridesWritesTheCommittedPack(t *testing.T) {
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if code, _, stderr := runCmd("--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if files[i].Data, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path))); err != nil {
			t.Fatal(err)
		}
	}
	if stale, err := pack.Stale(out, files); err != nil || len(stale) > 0 {
		t.Errorf("the command wrote %v differently from the checkout (%v); run `make generate`", stale, err)
	}
}

func TestConfigOverrideChangesTheRules(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pack.yaml")
	if err := os.WriteFile(cfgPath, []byte("alerts:\n  wait_p99:\n    threshold_seconds: 2.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCmd("--config", cfgPath, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, rules.Dir, rules.AlertingFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "p99_rate30m > 2.5") {
		t.Errorf("override not applied:\n%s", data)
	}
}

func TestPrintConfigRoundTrips(t *testing.T) {
	code, stdout, stderr := runCmd("--print-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cfg, err := packconfig.Parse([]byte(stdout))
	if err != nil {
		t.Fatalf("printed config does not load: %v\n%s", err, stdout)
	}
	if !reflect.DeepEqual(cfg, packconfig.Default()) {
		t.Errorf("printed config is not the default:\n%s", stdout)
	}
}

func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("alerts:\n  wait_p99:\n    threshold_secs: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unsatisfiable := filepath.Join(dir, "unsatisfiable.yaml")
	if err := os.WriteFile(unsatisfiable, []byte("selectors:\n  exporter: job=\"a\", job=\"b\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown flag", []string{"--outdir", dir}, 2, "unknown flag: --outdir"},
		{"stray argument", []string{"--out", dir, "extra"}, 2, `unexpected argument "extra"`},
		{"missing config file", []string{"--config", filepath.Join(dir, "nope.yaml"), "--out", dir}, 2, "nope.yaml"},
		{"unknown config key", []string{"--config", bad, "--out", dir}, 2, "alerts.wait_p99.threshold_secs (line 3): unknown key"},
		{"output is a file", []string{"--out", notADir}, 1, "not a directory"},
		{"selector no series can satisfy", []string{"--config", unsatisfiable, "--out", dir}, 2, "selectors.exporter: no label value found for label job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (%s)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr %q does not mention %q", stderr, tt.wantErr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "lockwatch-pack: ") {
				t.Errorf("stderr is not one prefixed line: %q", stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCmd("--help")
	if code != 0 || !strings.Contains(stdout, "--config") || !strings.Contains(stdout, "--out") {
		t.Errorf("exit %d, usage %q", code, stdout)
	}
}

func TestCheckoutRoot(t *testing.T) {
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "lockwatch-pack", "main.go")); err != nil {
		t.Errorf("root %s is not the checkout: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if _, err := checkoutRoot(); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("outside a checkout: err %v", err)
	}
}

// TestReportsWhatItWrote: the first run lists every file as updated, a second run as unchanged,
// and a run after an override names exactly the files the override changed.
func TestReportsWhatItWrote(t *testing.T) {
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	n := len(files)
	out := t.TempDir()
	code, stdout, stderr := runCmd("--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"updated   alerts/lockwatch-alerts.yml", "updated   alerts/lockwatch-recording.yml",
		"updated   dashboards/lockwatch-overview.json", "updated   dashboards/lockwatch-instances.json",
		"updated   deploy/kubernetes/prometheusrule.yaml", "updated   deploy/kubernetes/dashboards.yaml",
		"updated   deploy/helm/lock-exporter/Chart.yaml", "updated   deploy/helm/lock-exporter/files/rules/lockwatch-alerts.yml",
		fmt.Sprintf("%d of %d files updated under %s", n, n, out),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("first run does not say %q:\n%s", want, stdout)
		}
	}
	if _, stdout, _ = runCmd("--out", out); !strings.Contains(stdout, fmt.Sprintf("0 of %d files updated", n)) ||
		!strings.Contains(stdout, "unchanged alerts/lockwatch-alerts.yml") {
		t.Errorf("second run does not report everything unchanged:\n%s", stdout)
	}
	cfgPath := filepath.Join(t.TempDir(), "pack.yaml")
	if err := os.WriteFile(cfgPath, []byte("runbook_base_url: https://wiki.example/lockwatch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ = runCmd("--config", cfgPath, "--out", out)
	// The alerts, the two copies of them, and every rule test, which expects the runbook link.
	ruleTests := 0
	for _, f := range files {
		if strings.HasPrefix(f.Path, ruletests.Dir+"/") {
			ruleTests++
		}
	}
	for _, want := range []string{
		"updated   alerts/lockwatch-alerts.yml", "unchanged alerts/lockwatch-recording.yml",
		"unchanged dashboards/lockwatch-overview.json", "updated   deploy/kubernetes/prometheusrule.yaml",
		"updated   deploy/helm/lock-exporter/files/rules/lockwatch-alerts.yml",
		"updated   alerts/tests/lock_key_without_ttl_test.yml",
		fmt.Sprintf("%d of %d files updated", 3+ruleTests, n),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run with a new runbook URL does not say %q:\n%s", want, stdout)
		}
	}
}
