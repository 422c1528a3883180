package rulestest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestMain builds promtool once before the tests, which run promtool in parallel: in a fresh
// clone the first build takes minutes, and parallel first runs would each start it.
func TestMain(m *testing.M) {
	root, err := testkit.FindRepoRoot()
	if err == nil {
		var out []byte
		out, err = goTool(root, "--version").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, out)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rules_test: cannot run promtool: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// goTool returns `go tool -modfile=tools/go.mod promtool args...` to run in the repository
// root (go tool needs a main module).
func goTool(root string, args ...string) *exec.Cmd {
	cmd := exec.Command(testkit.GoBinary(), append([]string{"tool", "-modfile=" + filepath.Join(root, "tools", "go.mod"), "promtool"}, args...)...)
	// tools/go.mod is not in the workspace (go.work): -modfile works only with workspace mode off.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Dir = root
	return cmd
}

// promtool runs promtool through the tool directive of tools/go.mod (rather than a promtool
// on PATH), which pins its version and works in a fresh clone; after the first build it comes
// from the build cache. promtool resolves a test file's rule_files relative to that file.
func promtool(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	out, err := goTool(root, args...).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running promtool: %v\n%s", err, out)
	}
	return string(out), err
}

func testFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool test files in %s (%v)", dir, err)
	}
	return files
}

func TestPromtoolCheckRules(t *testing.T) {
	t.Parallel()
	root := testkit.RepoRoot(t)
	out, err := promtool(t, root, "check", "rules", "--lint=all", "--lint-fatal",
		filepath.Join(rules.Dir, rules.RecordingFile), filepath.Join(rules.Dir, rules.AlertingFile))
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

func TestPromtoolTestRules(t *testing.T) {
	t.Parallel()
	root := testkit.RepoRoot(t)
	args := append([]string{"test", "rules"}, testFiles(t, filepath.Join(root, "rules_test"))...)
	out, err := promtool(t, root, args...)
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// TestScenariosCanFail regenerates the rules with one safeguard weakened and runs the promtool
// file that covers it against them: each run must fail. This proves the quiet scenarios (burst,
// traffic guard, single scrape, Redis outage) are quiet because of the safeguard, not because the
// test data could never trigger the alert. Most safeguards are configuration and are weakened by
// an override; a guard that is not configurable is cut out of the built rules by edit.
func TestScenariosCanFail(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates the rules and runs promtool once per mutation")
	}
	root := testkit.RepoRoot(t)
	tests := []struct {
		name     string
		override string
		edit     func(t *testing.T, files []rules.RuleFile)
		file     string
		mustSay  string // text of the failure promtool must report
	}{
		{"not-owned ratio without traffic guard", "alerts:\n  not_owned_ratio:\n    min_operations: 0\n", nil,
			"not_owned_test.yml", `lock_namespace="rare"`},
		{"renew-failure fast tier without a long window", "alerts:\n  renewal_failure_ratio:\n    fast:\n      long: 10m\n", nil,
			"renewal_failure_test.yml", `lock_namespace="failover"`},
		{"abandonments with a count of three", "alerts:\n  abandonments:\n    min_count: 3\n", nil,
			"abandonments_test.yml", `lock_namespace="trickle"`},
		{"abandonments with a short window as long as for", "alerts:\n  abandonments:\n    short: 30m\n    for: 31m\n    long: 1h\n", nil,
			"abandonments_test.yml", "LockAbandonmentsSustained"},
		{"wait p99 without acquire guard", "alerts:\n  wait_p99:\n    min_acquires: 0\n", nil,
			"wait_p99_test.yml", `lock_namespace="quiet"`},
		{"wait p99 without short window", "alerts:\n  wait_p99:\n    short: 29m\n", nil,
			"wait_p99_test.yml", `lock_namespace="failover"`},
		{"key without TTL on one scrape", "alerts:\n  key_without_ttl:\n    for: 1m\n", nil,
			"key_without_ttl_test.yml", `lock_namespace="racy"`},
		{"renewal stalled on one scrape", "alerts:\n  renewal_stalled:\n    for: 0s\n", nil,
			"renewal_stalled_test.yml", `lock_namespace="scheduler"`},
		{"held too long on one overrun", "alerts:\n  held_too_long:\n    for: 0s\n", nil,
			"held_too_long_test.yml", `lock_namespace="batch"`},
		{"redis down on one failover", "alerts:\n  exporter_redis_down:\n    for: 1m\n", nil,
			"exporter_test.yml", `instance="exporter-b:9360"`},
		{"exporter absent during a restart", "alerts:\n  exporter_absent:\n    for: 2m\n", nil,
			"exporter_test.yml", "LockExporterAbsent"},
		{"scrape incomplete without the up guard", "", dropGuard(rules.AlertExporterScrapeIncomplete),
			"exporter_test.yml", `instance="exporter-a:9360"`},
		{"fenced-write rejection ratio without traffic guard", "alerts:\n  fenced_write_rejection_ratio:\n    min_events: 0\n", nil,
			"fenced_writes_test.yml", `lock_namespace="rare"`},
		{"fenced-write rejection ratio without its short window", "", dropTerm(rules.AlertFencedWriteRejectionRatioHigh, readsRange(5*time.Minute)),
			"fenced_writes_test.yml", `lock_namespace="failover"`},
		{"lapse ratio without traffic guard", "alerts:\n  lapse_ratio:\n    min_events: 0\n", nil,
			"lifecycle_test.yml", `lock_namespace="rare"`},
		{"takeover ratio without traffic guard", "alerts:\n  takeover_ratio:\n    min_events: 0\n", nil,
			"lifecycle_test.yml", `lock_namespace="rare"`},
		{"lapse ratio without its short window", "", dropTerm(rules.AlertKeyLapseRatioHigh, readsRange(5*time.Minute)),
			"lifecycle_test.yml", `lock_namespace="failover"`},
		{"takeover ratio without its short window", "", dropTerm(rules.AlertKeyTakeoverRatioHigh, readsRange(5*time.Minute)),
			"lifecycle_test.yml", `lock_namespace="failover"`},
		{"lapse ratio where not followed", "", dropTerm(rules.AlertKeyLapseRatioHigh, readsMetric("lock_exporter_lifecycle_following")),
			"lifecycle_test.yml", `lock_namespace="resync"`},
		{"takeover ratio where not followed", "", dropTerm(rules.AlertKeyTakeoverRatioHigh, readsMetric("lock_exporter_lifecycle_following")),
			"lifecycle_test.yml", `lock_namespace="resync"`},
		{"lapse ratio of a namespace ending by expiry", "", dropTerm(rules.AlertKeyLapseRatioHigh, readsMetric("lock_exporter_lifecycle_ends_by_expiry")),
			"lifecycle_test.yml", `lock_namespace="reconciler"`},
		{"takeover ratio of a namespace ending by expiry", "", dropTerm(rules.AlertKeyTakeoverRatioHigh, readsMetric("lock_exporter_lifecycle_ends_by_expiry")),
			"lifecycle_test.yml", `lock_namespace="reconciler"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := packconfig.Parse([]byte(tt.override))
			if err != nil {
				t.Fatal(err)
			}
			files, err := rules.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(t, files)
			}
			rendered, err := rules.Render(files)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if _, err := pack.Write(dir, rendered, io.Discard); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "rules_test"), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(root, "rules_test", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			test := filepath.Join(dir, "rules_test", tt.file)
			if err := os.WriteFile(test, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := promtool(t, root, "test", "rules", test)
			if err == nil {
				t.Fatalf("promtool passed %s against the rules weakened by %q", tt.file, tt.name)
			}
			if !strings.Contains(out, tt.mustSay) {
				t.Errorf("promtool failed, but not on %s:\n%s", tt.mustSay, out)
			}
		})
	}
}

// dropGuard returns an edit that reduces the named alert's "condition and guard" expression to
// its condition. It fails the test when the alert is missing or is not such an expression, so a
// reshaped rule cannot turn the mutation into a silent no-op.
func dropGuard(alert string) func(t *testing.T, files []rules.RuleFile) {
	return func(t *testing.T, files []rules.RuleFile) {
		t.Helper()
		found := false
		for r := range rules.All(files) {
			if r.Alert != alert {
				continue
			}
			and, ok := r.Expr.(*parser.BinaryExpr)
			if !ok || and.Op != parser.LAND {
				t.Fatalf("%s: expression %s is not a condition \"and\" a guard", alert, r.Expr)
			}
			r.Expr = and.LHS
			found = true
		}
		if !found {
			t.Fatalf("no %s rule to edit", alert)
		}
	}
}

// dropTerm returns an edit that removes from the named alert the one "and"/"unless" term for
// which reads is true, keeping the rest of the chain. It fails the test when the alert is
// missing or no term matches, so a reshaped rule cannot turn the mutation into a silent no-op.
func dropTerm(alert string, reads func(parser.Expr) bool) func(t *testing.T, files []rules.RuleFile) {
	return func(t *testing.T, files []rules.RuleFile) {
		t.Helper()
		found := false
		for r := range rules.All(files) {
			if r.Alert != alert {
				continue
			}
			for at := &r.Expr; ; {
				op, ok := (*at).(*parser.BinaryExpr)
				if !ok || (op.Op != parser.LAND && op.Op != parser.LUNLESS) {
					break
				}
				if reads(op.RHS) {
					*at = op.LHS
					found = true
					break
				}
				at = &op.LHS
			}
		}
		if !found {
			t.Fatalf("no %s rule with such a term to drop", alert)
		}
	}
}

// readsMetric is true of an expression that selects the named metric.
func readsMetric(name string) func(parser.Expr) bool {
	return func(e parser.Expr) bool {
		found := false
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok && vs.Name == name {
				found = true
			}
			return nil
		})
		return found
	}
}

// readsRange is true of an expression with a range selector over exactly d.
func readsRange(d time.Duration) func(parser.Expr) bool {
	return func(e parser.Expr) bool {
		found := false
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			if ms, ok := n.(*parser.MatrixSelector); ok && ms.Range == d {
				found = true
			}
			return nil
		})
		return found
	}
}
