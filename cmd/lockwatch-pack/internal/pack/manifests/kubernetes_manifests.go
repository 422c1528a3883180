// Package manifests generates deploy/kubernetes: the parts that carry the pack — the
// PrometheusRule holding the generated recording and alerting rules, and the dashboards as
// ConfigMaps for the Grafana sidecar — and, copied from static/, the exporter's ConfigMap,
// Deployment and Service (lock-exporter.yaml), its ServiceMonitor and the PodMonitor
// (monitors.yaml), and the kustomization.yaml listing them all, so `lockwatch-pack --out DIR`
// writes a directory `kubectl apply -k` takes without a checkout. Generate is a pack.Generator
// like the rules' and the dashboards', and embeds their output, so `make generate` keeps the
// manifests equal to alerts/ and dashboards/.
package manifests

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Dir is the directory of a lockwatch checkout that holds the Kubernetes manifests.
const Dir = "deploy/kubernetes"

// File names of the generated manifests inside Dir.
const (
	PrometheusRuleFile = "prometheusrule.yaml"
	DashboardsFile     = "dashboards.yaml"
	// exporterFile is the static manifest of the exporter, its ConfigMap and Deployment.
	exporterFile = "lock-exporter.yaml"
)

// Kubernetes names and labels the generated objects carry. The grafana_dashboard label is what
// the Grafana Helm chart's dashboard sidecar watches for by default.
const (
	appLabel            = "lockwatch"
	dashboardLabel      = "grafana_dashboard"
	dashboardFolderNote = "grafana_folder"
)

// static holds the manifests that do not depend on the pack configuration; edit them there and
// run `make generate`.
//
//go:embed static/*.yaml
var static embed.FS

// header opens every file, the copied ones included: to the user of the pack they are all
// generated. The sources of the copied ones are static/.
var header = pack.HashNotice()

// Generate is the manifests' pack.Generator: the PrometheusRule and the dashboard ConfigMaps for
// cfg, and the static manifests, under Dir.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	ruleFiles, err := rules.Generate(cfg)
	if err != nil {
		return nil, err
	}
	rule, err := prometheusRule(ruleFiles)
	if err != nil {
		return nil, err
	}
	boards, err := dashboards.Generate(cfg)
	if err != nil {
		return nil, err
	}
	cms, err := dashboardConfigMaps(boards)
	if err != nil {
		return nil, err
	}
	files := []pack.File{
		{Path: Dir + "/" + DashboardsFile, Data: cms},
		{Path: Dir + "/" + PrometheusRuleFile, Data: rule},
	}
	entries, err := static.ReadDir("static")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		data, err := static.ReadFile("static/" + e.Name())
		if err != nil {
			return nil, err
		}
		if e.Name() == exporterFile && cfg.DescribesLocks() {
			if data, err = exporterManifest(data, cfg); err != nil {
				return nil, err
			}
		}
		files = append(files, pack.File{
			Path: Dir + "/" + e.Name(),
			Data: append([]byte(header), data...),
		})
	}
	return files, nil
}

// prometheusRule wraps every generated rule file in one PrometheusRule object. The groups are
// the rule files' own text, indented under spec, so the pretty-printed expressions of alerts/
// appear unchanged (block scalars keep their indentation relative to their parent).
func prometheusRule(ruleFiles []pack.File) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString(`apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: lockwatch
  labels:
    app.kubernetes.io/name: ` + appLabel + `
    app.kubernetes.io/component: rules
spec:
  groups:
`)
	for _, r := range ruleFiles {
		groups, err := groupsText(r.Data)
		if err != nil {
			return nil, fmt.Errorf("manifests: %s: %w", r.Path, err)
		}
		for _, line := range strings.SplitAfter(groups, "\n") {
			if line != "" && line != "\n" {
				b.WriteString("    ")
			}
			b.WriteString(line)
		}
	}
	return b.Bytes(), nil
}

// groupsText returns the group list of a rule file: the lines after its "groups:" key.
func groupsText(ruleFile []byte) (string, error) {
	text := string(ruleFile)
	i := strings.Index(text, "\ngroups:\n")
	if i < 0 {
		if !strings.HasPrefix(text, "groups:\n") {
			return "", fmt.Errorf("no top-level groups key")
		}
		i = -1
	}
	body := text[i+len("\ngroups:\n"):]
	// The group items are written at two spaces' indentation under groups:; under spec.groups
	// they need the same relative indentation, which the caller adds.
	var out strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		out.WriteString(strings.TrimPrefix(line, "  "))
	}
	return out.String(), nil
}

// dashboardConfigMaps renders one ConfigMap per dashboard, labelled for the Grafana sidecar.
// They come in the order of the dashboards' file names.
func dashboardConfigMaps(boards []pack.File) ([]byte, error) {
	boards = slices.SortedFunc(slices.Values(boards), func(x, y pack.File) int { return strings.Compare(x.Path, y.Path) })
	var b bytes.Buffer
	b.WriteString(header)
	for i, board := range boards {
		name := path.Base(board.Path)
		if i > 0 {
			b.WriteString("---\n")
		}
		cm := configMap{
			APIVersion: "v1",
			Kind:       "ConfigMap",
			Metadata: metadata{
				Name: "lockwatch-dashboard-" + strings.TrimPrefix(strings.TrimSuffix(name, ".json"), "lockwatch-"),
				Labels: map[string]string{
					"app.kubernetes.io/name":      appLabel,
					"app.kubernetes.io/component": "dashboards",
					dashboardLabel:                "1",
				},
				Annotations: map[string]string{dashboardFolderNote: "Lockwatch"},
			},
			Data: map[string]string{name: string(board.Data)},
		}
		var doc bytes.Buffer
		enc := yaml.NewEncoder(&doc)
		enc.SetIndent(2)
		if err := enc.Encode(cm); err != nil {
			return nil, fmt.Errorf("manifests: %s: %w", name, err)
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		b.Write(doc.Bytes())
	}
	return b.Bytes(), nil
}

type configMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   metadata          `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type metadata struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}
