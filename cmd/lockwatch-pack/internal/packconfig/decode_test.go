package packconfig

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTypeName matches what yaml.v3's own errors print, such as packconfig.WaitAlert,
// model.Duration or !!str: none of it may reach a user.
var goTypeName = regexp.MustCompile(`packconfig\.|model\.|!!|\bfloat64\b|\bint\b|\bbool\b|unmarshal|struct`)

// TestParseErrorsNameKeyAndValue: every error about a key or a value names the setting by its
// YAML path and line, shows the value written, and never a Go type name.
func TestParseErrorsNameKeyAndValue(t *testing.T) {
	tests := []struct {
		name, in, want string
		sentinel       error
	}{
		{"unknown key in an alert", "alerts:\n  wait_p99:\n    threshold: 2\n",
			"alerts.wait_p99.threshold (line 3): unknown key; alerts.wait_p99 takes disabled, severity, threshold_seconds, long, short, min_acquires, for", ErrUnknownKey},
		{"unknown alert", "alerts:\n  wait:\n    threshold: 2\n",
			"alerts.wait (line 2): unknown key; alerts takes not_owned_ratio", ErrUnknownKey},
		{"unknown top-level key", "runbook_url: https://x.example/r.md\n",
			"runbook_url (line 1): unknown key; the top level takes selectors, cluster_labels, runbook_base_url", ErrUnknownKey},
		{"word for a number", "alerts:\n  wait_p99:\n    threshold_seconds: fast\n",
			`alerts.wait_p99.threshold_seconds (line 3): "fast" is not a number`, ErrBadValue},
		{"word for a duration", "alerts:\n  exporter_absent:\n    for: soon\n",
			`alerts.exporter_absent.for (line 3): "soon" is not a duration such as 30s, 5m or 1h`, ErrBadValue},
		{"word for a bool", "alerts:\n  exporter_absent:\n    disabled: maybe\n",
			`alerts.exporter_absent.disabled (line 3): "maybe" is not true or false`, ErrBadValue},
		{"fraction for a whole number", "dashboards:\n  stalest_keys: 2.5\n",
			`dashboards.stalest_keys (line 2): "2.5" is not a whole number`, ErrBadValue},
		{"scalar for a list", "recording_windows: 5m\n",
			`recording_windows (line 1): "5m" is not a list of durations such as [5m, 1h]`, ErrBadValue},
		{"bad window in a list", "recording_windows: [5m, later]\n",
			`recording_windows (line 1): a list is not a list of durations`, ErrBadValue},
		{"scalar for a section", "alerts: none\n",
			`alerts (line 1): "none" is not a mapping of settings (key: value)`, ErrBadValue},
		{"list for a section", "selectors:\n  - job\n",
			`selectors (line 2): a list is not a mapping of settings`, ErrBadValue},
		{"unknown cluster key", "cluster_label: cluster\n",
			"cluster_label (line 1): unknown key", ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.in)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\ndoes not contain %q", err, tt.want)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tt.sentinel)
			}
			if m := goTypeName.FindString(err.Error()); m != "" {
				t.Errorf("error %q shows Go or YAML type text %q", err, m)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestParseKeepsDefaultsForEmptySections: a section written with nothing below it, or a null,
// keeps its defaults instead of zeroing them.
func TestParseKeepsDefaultsForEmptySections(t *testing.T) {
	for _, in := range []string{"alerts:\n", "alerts: ~\n", "alerts:\n  wait_p99:\n", "dashboards: {}\n"} {
		cfg, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if cfg.Alerts.WaitP99 != Default().Alerts.WaitP99 || cfg.Dashboards.Refresh != Default().Dashboards.Refresh {
			t.Errorf("Parse(%q) changed defaults", in)
		}
	}
}

// TestDocumentedErrorsAreTheWholeMessage: the two error lines docs/pack.md quotes are what
// Parse says for those files, word for word: a bad value's message ended in ": bad value" (the
// text of the ErrBadValue it wraps), which says nothing the line did not, and which the doc
// did not show.
func TestDocumentedErrorsAreTheWholeMessage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "pack.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(raw)), " ")
	for _, tt := range []struct{ in, want string }{
		{"alerts:\n  wait_p99:\n    threshold: 2\n",
			"alerts.wait_p99.threshold (line 3): unknown key; alerts.wait_p99 takes disabled, severity, threshold_seconds, long, short, min_acquires, for"},
		{"alerts:\n  exporter_absent:\n    for: soon\n",
			`alerts.exporter_absent.for (line 3): "soon" is not a duration such as 30s, 5m or 1h`},
		{docsExample(t, raw, `pattern: "scheduler:job:*"`, `patern: "scheduler:job:*"`), `line 3: unknown field "patern"`},
		{docsExample(t, raw, "types: [hash]", "types: [list]"), `line 7: namespace "billing": type "list" is not "string" or "hash"`},
		{"namespaces: [{name: a, pattern: 'a:*'}]\nredis:\n  addrs: [redis:6379]\n  password: hunter2\n",
			"redis.password (line 4): a password is never written in the pack configuration: give secret: {name: …, key: …} (a Kubernetes Secret) or file: (a path where it is mounted)"},
	} {
		if !strings.Contains(doc, "`"+tt.want+"`") {
			t.Errorf("docs/pack.md does not quote %q", tt.want)
		}
		_, err := Parse([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// docsExample is the pack configuration docs/pack.md shows for namespaces and redis, with old
// replaced by new.
func docsExample(t *testing.T, doc []byte, old, new string) string {
	t.Helper()
	_, rest, ok := strings.Cut(string(doc), "```yaml\nnamespaces:\n")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed || !strings.Contains(example, old) {
		t.Fatalf("docs/pack.md has no namespaces example holding %q", old)
	}
	return "namespaces:\n" + strings.Replace(example, old, new, 1)
}

// TestDocsLocksExampleParses: the namespaces and redis example of docs/pack.md is valid.
func TestDocsLocksExampleParses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "pack.md"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(docsExample(t, raw, "name: scheduler", "name: scheduler")))
	if err != nil || !cfg.DescribesLocks() {
		t.Errorf("Parse(docs example): %v", err)
	}
}
