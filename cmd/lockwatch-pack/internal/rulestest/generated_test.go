package rulestest

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/ruletests"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// customisedPack is a pack configuration unlike the defaults in everything the generated rule
// tests follow; unusualPack one at the edges of what the settings allow.
const (
	customisedPack = "testdata/customised-pack.yml"
	unusualPack    = "testdata/unusual-pack.yml"
)

// writeRulesAndTests writes the rules and the rule tests lockwatch-pack generates for cfg
// under a new directory, and returns it.
func writeRulesAndTests(t *testing.T, cfg packconfig.Config) string {
	t.Helper()
	files, err := pack.Generate(cfg, rules.Generate, ruletests.Generate)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := pack.Write(dir, files, io.Discard); err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadCustomised(t *testing.T) packconfig.Config {
	t.Helper()
	return load(t, customisedPack)
}

func load(t *testing.T, path string) packconfig.Config {
	t.Helper()
	cfg, err := packconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// generatedTests are the rule test files under a pack's root.
func generatedTests(t *testing.T, root string) []string {
	t.Helper()
	return testFiles(t, filepath.Join(root, filepath.FromSlash(ruletests.Dir)))
}

// alertTests is the generated test file of one alert under a pack's root.
func alertTests(root, alert string) string {
	return filepath.Join(root, filepath.FromSlash(ruletests.Dir), ruletests.FileName(alert))
}

// TestGeneratedRuleTests runs the rule tests lockwatch-pack generates, for the committed pack
// and for customised ones, on the promtool of tools/go.mod.
func TestGeneratedRuleTests(t *testing.T) {
	root := testkit.RepoRoot(t)
	tests := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"committed pack", func(*testing.T) string { return root }},
		{"customised pack", func(t *testing.T) string { return writeRulesAndTests(t, loadCustomised(t)) }},
		{"unusual pack", func(t *testing.T) string { return writeRulesAndTests(t, load(t, unusualPack)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"test", "rules"}, generatedTests(t, tt.dir(t))...)
			if out, err := promtool(t, root, args...); err != nil {
				t.Fatalf("promtool test rules: %v\n%s", err, out)
			}
		})
	}
}

// ruleEdit is a hand edit of a generated rule file: every match of the regular expression old
// is replaced by new (with $1 for its group), and there must be want matches.
type ruleEdit struct {
	file     string
	old, new string
	want     int
}

// brokenRules are hand edits that break the customised pack's rules in a threshold, a for:
// duration or a selector, with the alert whose generated tests must then fail. A threshold is
// changed in both windows of its tier, as a user retuning it would.
var brokenRules = []struct {
	name  string
	edit  ruleEdit
	alert string
}{
	{"not-owned fast tier threshold raised", ruleEdit{rules.AlertingFile, `(lock_not_owned:ratio_rate\w+) > 0.2\n`, "$1 > 0.5\n", 2}, rules.AlertNotOwnedRatioHigh},
	{"not-owned slow tier threshold lowered", ruleEdit{rules.AlertingFile, `(lock_not_owned:ratio_rate\w+) > 0.03\n`, "$1 > 0.005\n", 2}, rules.AlertNotOwnedRatioHigh},
	{"renew-failure fast tier threshold lowered", ruleEdit{rules.AlertingFile, `(lock_renewal_failures:ratio_rate\w+) > 0.25\n`, "$1 > 0.1\n", 2}, rules.AlertRenewalFailureRatioHigh},
	{"wait p99 threshold raised", ruleEdit{rules.AlertingFile, `(p99_rate\w+) > 0.25\n`, "$1 > 2.5\n", 2}, rules.AlertWaitP99High},
	{"renewal-stalled factor raised", ruleEdit{rules.AlertingFile, `\b3 \* (lock_expected_renew_interval_seconds)`, "30 * $1", 1}, rules.AlertRenewalStalled},
	{"key-without-TTL for: shortened", ruleEdit{rules.AlertingFile, `(alert: LockKeyWithoutTTL\n\s+expr: [^\n]+\n\s+)for: 3m`, "${1}for: 1m", 1}, rules.AlertKeyWithoutTTL},
	{"library selector narrowed", ruleEdit{rules.RecordingFile, `job=~"workers\|schedulers"`, `job=~"schedulers"`, 85}, rules.AlertNotOwnedRatioHigh},
	{"exporter selector without its env matcher", ruleEdit{rules.AlertingFile, `env!="dev",`, ``, 27}, rules.AlertKeyWithoutTTL},
}

// TestGeneratedRuleTestsCatchBrokenRules is the mutation check: the customised pack's rules,
// hand-edited to break one threshold, for: duration or selector, fail its generated tests, on
// the alert the edit broke (its test file is the one run). Tests that passed on broken rules would prove nothing about the
// rules they were generated for.
func TestGeneratedRuleTestsCatchBrokenRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs promtool over the customised pack once per edit")
	}
	root := testkit.RepoRoot(t)
	cfg := loadCustomised(t)
	for _, tt := range brokenRules {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeRulesAndTests(t, cfg)
			applyEdit(t, dir, tt.edit)
			out, err := promtool(t, root, "test", "rules", alertTests(dir, tt.alert))
			if err == nil {
				t.Fatalf("the generated tests pass on rules with the %s", tt.name)
			}
			if !strings.Contains(out, "alertname: "+tt.alert+",") {
				t.Errorf("promtool failed, but not on %s:\n%s", tt.alert, out)
			}
		})
	}
}

// applyEdit edits a generated rule file as a user would, failing the test when the text to
// replace is not there as often as expected, so a reshaped rule cannot turn the edit into a
// no-op.
func applyEdit(t *testing.T, root string, e ruleEdit) {
	t.Helper()
	path := filepath.Join(root, rules.Dir, e.file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(e.old)
	if n := len(re.FindAllIndex(data, -1)); n != e.want {
		t.Fatalf("%s matches %s %d times, want %d", e.file, e.old, n, e.want)
	}
	if err := os.WriteFile(path, re.ReplaceAll(data, []byte(e.new)), 0o644); err != nil {
		t.Fatal(err)
	}
}
