// Package deploytest holds no code: its tests check the repository's deployment files (deploy/)
// with the tools that will load them (promtool, amtool) and with the schemas they must follow,
// and keep the docs' paths, anchors and identifiers true (docs_*_test.go).
package deploytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// documents decodes every YAML document of a file.
func documents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if doc == nil {
			t.Fatalf("%s: empty document", path)
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML document", path)
	}
	return docs
}

func TestEveryFileParses(t *testing.T) {
	root := testkit.RepoRoot(t)
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d fs.DirEntry, err error) error {
		// Helm templates are Go templates, not YAML: make chart-test renders and checks them.
		if err == nil && d.IsDir() && d.Name() == "templates" && strings.Contains(path, filepath.Join("deploy", "helm")) {
			return filepath.SkipDir
		}
		if err == nil && (strings.HasSuffix(path, ".yml") || strings.HasSuffix(path, ".yaml")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("found only %d YAML files under deploy/", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			docs := documents(t, f)
			if !strings.Contains(rel, "kubernetes") || strings.HasSuffix(rel, "kustomization.yaml") {
				return
			}
			for i, d := range docs {
				meta, _ := d["metadata"].(map[string]any)
				if d["apiVersion"] == nil || d["kind"] == nil || meta == nil || meta["name"] == nil {
					t.Errorf("document %d is not a Kubernetes object (apiVersion, kind, metadata.name)", i)
				}
			}
		})
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	dir := filepath.Join(testkit.RepoRoot(t), "deploy", "kubernetes")
	k := documents(t, filepath.Join(dir, "kustomization.yaml"))[0]
	listed := map[string]bool{}
	for _, r := range k["resources"].([]any) {
		listed[r.(string)] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "kustomization.yaml" && strings.HasSuffix(e.Name(), ".yaml") && !listed[e.Name()] {
			t.Errorf("kustomization.yaml does not list %s", e.Name())
		}
	}
	for r := range listed {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
}

// get walks a decoded YAML tree by keys and list indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func kubeObject(t *testing.T, file, kind string) map[string]any {
	t.Helper()
	for _, d := range documents(t, filepath.Join(testkit.RepoRoot(t), "deploy", "kubernetes", file)) {
		if d["kind"] == kind {
			return d
		}
	}
	t.Fatalf("%s has no %s", file, kind)
	return nil
}

func TestDeploymentIsLockedDown(t *testing.T) {
	d := kubeObject(t, "lock-exporter.yaml", "Deployment")
	pod := get(d, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"pod runAsNonRoot", get(pod, "securityContext", "runAsNonRoot"), true},
		{"readOnlyRootFilesystem", get(c, "securityContext", "readOnlyRootFilesystem"), true},
		{"allowPrivilegeEscalation", get(c, "securityContext", "allowPrivilegeEscalation"), false},
		{"capabilities dropped", get(c, "securityContext", "capabilities", "drop", 0), "ALL"},
		{"liveness probe path", get(c, "livenessProbe", "httpGet", "path"), "/-/healthy"},
		{"readiness probe path", get(c, "readinessProbe", "httpGet", "path"), "/-/healthy"},
		{"cpu request", get(c, "resources", "requests", "cpu") != nil, true},
		{"memory request", get(c, "resources", "requests", "memory") != nil, true},
		{"memory limit", get(c, "resources", "limits", "memory") != nil, true},
		{"config mounted", get(c, "volumeMounts", 0, "mountPath"), "/etc/lock-exporter"},
		{"metrics port", get(c, "ports", 0, "containerPort"), 9866},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	svc := kubeObject(t, "lock-exporter.yaml", "Service")
	sm := kubeObject(t, "monitors.yaml", "ServiceMonitor")
	if get(sm, "spec", "selector", "matchLabels", "app.kubernetes.io/name") != get(svc, "metadata", "labels", "app.kubernetes.io/name") {
		t.Error("the ServiceMonitor does not select the Service")
	}
	if get(sm, "spec", "endpoints", 0, "port") != get(svc, "spec", "ports", 0, "name") {
		t.Error("the ServiceMonitor scrapes a port the Service does not name")
	}
}

// TestExporterConfigMapLoads loads the ConfigMap's file with the exporter's own strict loader.
func TestExporterConfigMapLoads(t *testing.T) {
	cm := kubeObject(t, "lock-exporter.yaml", "ConfigMap")
	content, _ := get(cm, "data", "lock-exporter.yml").(string)
	path := filepath.Join(t.TempDir(), "lock-exporter.yml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := exporterconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Namespaces) == 0 {
		t.Error("the exporter ConfigMap declares no namespace")
	}
	d := kubeObject(t, "lock-exporter.yaml", "Deployment")
	if arg := get(d, "spec", "template", "spec", "containers", 0, "args", 0); arg != "--config.file=/etc/lock-exporter/lock-exporter.yml" {
		t.Errorf("the Deployment reads %v, not the ConfigMap's file", arg)
	}
}

func TestAmtoolCheckConfig(t *testing.T) {
	testkit.RunTool(t, "amtool", "check-config", "deploy/alertmanager/alertmanager.yml")
}

func TestAlertmanagerInhibitsWarningByCriticalOfTheSameFamily(t *testing.T) {
	am := documents(t, filepath.Join(testkit.RepoRoot(t), "deploy", "alertmanager", "alertmanager.yml"))[0]
	rule := get(am, "inhibit_rules", 0)
	if get(rule, "source_matchers", 0) != `severity="critical"` || get(rule, "target_matchers", 0) != `severity="warning"` {
		t.Errorf("inhibit rule %v: want critical silencing warning", rule)
	}
	// The two tiers of one ratio alert share alertname, job and lock_namespace (the rules
	// aggregate by job and lock_namespace). Without job, another application's critical tier
	// for a namespace of the same name (two services each with a "jobs" namespace) silenced this
	// one's warning, a separate problem nobody would hear of.
	equal := fmt.Sprint(get(rule, "equal"))
	if equal != "[alertname job lock_namespace]" {
		t.Errorf("inhibit rule equal = %s, want [alertname job lock_namespace]", equal)
	}
	if got := fmt.Sprint(get(am, "route", "group_by")); !strings.Contains(got, "lock_namespace") {
		t.Errorf("route group_by = %s, want lock_namespace in it", got)
	}
}

func TestGrafanaProvisioning(t *testing.T) {
	dir := filepath.Join(testkit.RepoRoot(t), "deploy", "grafana", "provisioning")
	ds := documents(t, filepath.Join(dir, "datasources", "lockwatch.yml"))[0]
	if get(ds, "apiVersion") != 1 || get(ds, "datasources", 0, "type") != "prometheus" {
		t.Errorf("datasource provisioning: %v", ds)
	}
	db := documents(t, filepath.Join(dir, "dashboards", "lockwatch.yml"))[0]
	if get(db, "apiVersion") != 1 || get(db, "providers", 0, "type") != "file" || get(db, "providers", 0, "options", "path") == nil {
		t.Errorf("dashboard provisioning: %v", db)
	}
}
