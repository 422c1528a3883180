package rules

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// ruleFileYAML is the Prometheus rule-file format, decoded strictly so that a stray key fails.
type ruleFileYAML struct {
	Groups []struct {
		Name  string     `yaml:"name"`
		Rules []ruleYAML `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleYAML struct {
	Record      string            `yaml:"record"`
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         model.Duration    `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

var (
	// CamelCase with the pack's prefix. Unlike mixtool's `^([A-Z]+[a-z0-9]+)+$` this accepts
	// a final acronym, as in the contract name LockKeyWithoutTTL.
	alertNameRE       = regexp.MustCompile(`^Lock(?:[A-Z][a-z0-9]*)+$`)
	summaryRE         = regexp.MustCompile(`^[A-Z].+\.$`)
	recordRE          = regexp.MustCompile(`^job_lock_namespace:[a-z0-9_]+:[a-z0-9_]+$`)
	allowedLabels     = []string{"severity"}
	allowedSeverities = []string{"critical", "warning", "info"}
)

// promTemplateFuncs are the Prometheus template functions the descriptions may use; only their
// names matter for parsing.
var promTemplateFuncs = template.FuncMap{
	"humanize":           func(any) string { return "" },
	"humanizePercentage": func(any) string { return "" },
	"humanizeDuration":   func(any) string { return "" },
}

// promTemplateVars are the variables Prometheus defines in front of every annotation template.
const promTemplateVars = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}"

// lintAlert returns every style problem of one alerting rule, in the manner of mixtool lint.
func lintAlert(r ruleYAML, anchors map[string]bool) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !alertNameRE.MatchString(r.Alert) {
		add("name %q is not CamelCase with the Lock prefix", r.Alert)
	}
	if !slices.Contains(allowedSeverities, r.Labels["severity"]) {
		add("severity %q is not one of %v", r.Labels["severity"], allowedSeverities)
	}
	for k := range r.Labels {
		if !slices.Contains(allowedLabels, k) {
			add("unexpected label %q", k)
		}
	}
	if r.For <= 0 {
		add("no for: duration, so a single evaluation fires it")
	}
	summary := r.Annotations["summary"]
	if strings.Contains(summary, "{{") {
		add("summary %q is templated; it must be static so alerts group", summary)
	}
	if !summaryRE.MatchString(summary) {
		add("summary %q is not a sentence starting with a capital letter and ending with a period", summary)
	}
	desc := r.Annotations["description"]
	if !strings.Contains(desc, "{{") {
		add("description %q is not templated", desc)
	} else if _, err := template.New(r.Alert).Funcs(promTemplateFuncs).Parse(promTemplateVars + desc); err != nil {
		add("description does not parse as a template: %v", err)
	}
	if !strings.Contains(desc, "$labels.") {
		add("description names no label (namespace or instance)")
	}
	url := r.Annotations["runbook_url"]
	base, anchor, ok := strings.Cut(url, "#")
	switch {
	case !ok || base != packconfig.DefaultRunbookBaseURL:
		add("runbook_url %q does not point into %s", url, packconfig.DefaultRunbookBaseURL)
	case !anchors[anchor]:
		add("runbook_url anchor #%s has no heading in docs/runbook.md", anchor)
	case anchor != strings.ToLower(r.Alert):
		add("runbook_url anchor #%s is not the alert's own section", anchor)
	}
	for k := range r.Annotations {
		if !slices.Contains([]string{"summary", "description", "runbook_url"}, k) {
			add("unexpected annotation %q", k)
		}
	}
	return problems
}

// githubAnchors returns the anchors GitHub generates for the markdown headings: lower case,
// spaces to hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchors(markdown []byte) map[string]bool {
	anchors := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(markdown))
	inFence := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

// readRuleFile reads a committed rule file of the checkout.
func readRuleFile(t *testing.T, name string) ruleFileYAML {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFileYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func TestLintCommittedAlerts(t *testing.T) {
	runbook, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := githubAnchors(runbook)
	var names []string
	for _, g := range readRuleFile(t, AlertingFile).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: recording rule %s in the alerts file", g.Name, r.Record)
				continue
			}
			names = append(names, r.Alert)
			for _, p := range lintAlert(r, anchors) {
				t.Errorf("%s (%s): %s", r.Alert, r.Labels["severity"], p)
			}
		}
	}
	// The contract's alert names must all be there.
	for _, want := range []string{
		"LockNotOwnedRatioHigh", "LockRenewalFailureRatioHigh", "LockAbandonmentsSustained",
		"LockWaitP99High", "LockKeyWithoutTTL", "LockRenewalStalled", "LockExporterRedisDown",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("contract alert %s is missing", want)
		}
	}
}

func TestLintCommittedRecordingRules(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range readRuleFile(t, RecordingFile).Groups {
		for _, r := range g.Rules {
			if r.Record == "" || r.Alert != "" {
				t.Errorf("group %s: %q is not a recording rule", g.Name, r.Alert)
				continue
			}
			if !recordRE.MatchString(r.Record) {
				t.Errorf("%s does not follow level:metric:operations with level job_lock_namespace", r.Record)
			}
			if seen[r.Record] {
				t.Errorf("%s is recorded twice", r.Record)
			}
			seen[r.Record] = true
		}
	}
}

// TestLintCatchesProblems feeds the linter rules that break each check once.
func TestLintCatchesProblems(t *testing.T) {
	anchors := map[string]bool{"lockgood": true, "other": true}
	good := ruleYAML{
		Alert:  "LockGood",
		For:    model.Duration(60e9),
		Labels: map[string]string{"severity": "warning"},
		Annotations: map[string]string{
			"summary":     "Something is wrong.",
			"description": "Namespace {{ $labels.lock_namespace }} is at {{ $value | humanize }}.",
			"runbook_url": packconfig.DefaultRunbookBaseURL + "#lockgood",
		},
	}
	if p := lintAlert(good, anchors); len(p) != 0 {
		t.Fatalf("good rule flagged: %v", p)
	}
	tests := []struct {
		name   string
		mutate func(r *ruleYAML)
		want   string
	}{
		{"snake case", func(r *ruleYAML) { r.Alert = "lock_good" }, "CamelCase"},
		{"no prefix", func(r *ruleYAML) { r.Alert = "GoodAlert" }, "CamelCase"},
		{"severity", func(r *ruleYAML) { r.Labels = map[string]string{"severity": "page"} }, "severity"},
		{"extra label", func(r *ruleYAML) { r.Labels = map[string]string{"severity": "info", "team": "x"} }, `label "team"`},
		{"no for", func(r *ruleYAML) { r.For = 0 }, "for:"},
		{"templated summary", func(r *ruleYAML) { r.Annotations["summary"] = "{{ $labels.job }} is wrong." }, "templated"},
		{"summary without period", func(r *ruleYAML) { r.Annotations["summary"] = "Something is wrong" }, "period"},
		{"static description", func(r *ruleYAML) { r.Annotations["description"] = "Something." }, "not templated"},
		{"broken template", func(r *ruleYAML) { r.Annotations["description"] = "{{ $labels.job " }, "parse"},
		{"description without labels", func(r *ruleYAML) { r.Annotations["description"] = "{{ $value }} bad." }, "names no label"},
		{"foreign runbook", func(r *ruleYAML) { r.Annotations["runbook_url"] = "https://example.com/r.md#lockgood" }, "does not point"},
		{"missing anchor", func(r *ruleYAML) { r.Annotations["runbook_url"] = packconfig.DefaultRunbookBaseURL + "#nope" }, "no heading"},
		{"someone else's anchor", func(r *ruleYAML) { r.Annotations["runbook_url"] = packconfig.DefaultRunbookBaseURL + "#other" }, "own section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			r.Labels = map[string]string{"severity": "warning"}
			r.Annotations = map[string]string{}
			for k, v := range good.Annotations {
				r.Annotations[k] = v
			}
			tt.mutate(&r)
			problems := lintAlert(r, anchors)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tt.want) }) {
				t.Errorf("problems %v do not mention %q", problems, tt.want)
			}
		})
	}
}

func TestGithubAnchors(t *testing.T) {
	got := githubAnchors([]byte("# lockwatch runbook\n## LockKeyWithoutTTL\n```\n# not a heading\n```\n## Before you start\n"))
	for _, want := range []string{"lockwatch-runbook", "lockkeywithoutttl", "before-you-start"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment inside a code block became an anchor")
	}
}
