package charttest

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/labels"
)

// oddValues are values a user may well write that YAML reads as other types when spliced in
// unquoted (a Secret named 2024, a key "1" or "true", a priority class "yes", a port name given
// as "8080"), and labels given in more than one of commonLabels, monitoringLabels, podLabels and
// dashboards.labels, or naming a label the chart sets itself.
const oddValues = `
redis: {addr: "r:6379", existingSecret: "2024", existingSecretPasswordKey: "1"}
targets: [{name: t, addr: "t:6379", existingSecret: "0777", existingSecretPasswordKey: "true"}]
priorityClassName: "yes"
fullnameOverride: locks
commonLabels: {app.kubernetes.io/part-of: shop, team: a}
monitoringLabels: {team: b, release: kps}
podLabels: {app.kubernetes.io/name: other, team: d}
serviceMonitor: {enabled: true, jobLabel: "on"}
podMonitor: {enabled: true, port: "8080", path: "/metrics"}
prometheusRule: {enabled: true}
dashboards: {enabled: true, namespace: "2024", labels: {grafana_dashboard: "1", team: c}}
`

// TestOddValuesRenderStrictly renders oddValues as release "2024" in namespace "2025" (both
// valid names) and decodes every object strictly. Before, the chart wrote such strings unquoted
// (secretName: 2024, key: true, namespace: 2025: a number and a boolean the API refuses for a
// string field) and wrote a label twice when two label maps named it (a duplicate key, refused by
// strict decoding; read leniently, a podLabels app.kubernetes.io/name replaced the label the
// Deployment selects its pods by).
func TestOddValuesRenderStrictly(t *testing.T) {
	// Every value is a valid Kubernetes name where it is one (lint checks the objects' names).
	helm(t, "lint", "--strict", chartDir, "--namespace", "2025", "--values", writeValues(t, oddValues))
	out := helm(t, "template", "2024", chartDir, "--namespace", "2025", "--values", writeValues(t, oddValues))
	r, err := decode(out)
	if err != nil {
		t.Fatalf("strict decoding of helm template: %v", err)
	}
	if len(r.deployments) != 1 || len(r.serviceMonitors) != 1 || len(r.podMonitors) != 1 || len(r.rules) != 1 {
		t.Fatalf("rendered %d Deployments, %d ServiceMonitors, %d PodMonitors, %d PrometheusRules; want 1 each",
			len(r.deployments), len(r.serviceMonitors), len(r.podMonitors), len(r.rules))
	}
	d := r.deployments[0]
	if d.Name != "locks" || d.Namespace != "2025" {
		t.Errorf("Deployment %s/%s, want 2025/locks", d.Namespace, d.Name)
	}
	pod := d.Spec.Template
	if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, pod.Labels)
	}
	if pod.Spec.PriorityClassName != "yes" {
		t.Errorf("priorityClassName %q, want yes", pod.Spec.PriorityClassName)
	}
	secrets := map[string]string{} // Secret -> key
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && len(v.Secret.Items) == 1 {
			secrets[v.Secret.SecretName] = v.Secret.Items[0].Key
		}
	}
	if secrets["2024"] != "1" || secrets["0777"] != "true" {
		t.Errorf("Secret volumes %v, want 2024 -> 1 and 0777 -> true", secrets)
	}
	// Later maps win over earlier ones; the chart's own app.kubernetes.io/name and instance, which
	// the Deployment and Service select by, win over all.
	for what, got := range map[string]map[string]string{
		"Deployment": d.Labels, "pod": pod.Labels, "ServiceMonitor": r.serviceMonitors[0].Labels,
		"PodMonitor": r.podMonitors[0].Labels, "PrometheusRule": r.rules[0].Labels,
	} {
		if got["app.kubernetes.io/part-of"] != "shop" || got["app.kubernetes.io/name"] != "lock-exporter" ||
			got["app.kubernetes.io/instance"] != "2024" {
			t.Errorf("%s labels %v: want part-of shop (commonLabels), name lock-exporter, instance 2024", what, got)
		}
	}
	if team := pod.Labels["team"]; team != "d" {
		t.Errorf("pod label team=%q, want d (podLabels over commonLabels)", team)
	}
	if team := r.serviceMonitors[0].Labels["team"]; team != "b" || r.serviceMonitors[0].Labels["release"] != "kps" {
		t.Errorf("ServiceMonitor labels %v, want team b and release kps (monitoringLabels)", r.serviceMonitors[0].Labels)
	}
	if sm := r.serviceMonitors[0]; sm.Spec.JobLabel != "on" || len(sm.Spec.NamespaceSelector.MatchNames) != 1 || sm.Spec.NamespaceSelector.MatchNames[0] != "2025" {
		t.Errorf("ServiceMonitor jobLabel %q, namespaces %v; want on, [2025]", sm.Spec.JobLabel, sm.Spec.NamespaceSelector.MatchNames)
	}
	if ep := r.podMonitors[0].Spec.PodMetricsEndpoints[0]; ep.Port == nil || *ep.Port != "8080" {
		t.Errorf("PodMonitor port %v, want 8080", ep.Port)
	}
	boards := 0
	for _, cm := range r.configMaps {
		if cm.Labels["grafana_dashboard"] == "" {
			continue
		}
		boards++
		if cm.Namespace != "2024" || cm.Labels["team"] != "c" || cm.Labels["app.kubernetes.io/part-of"] != "shop" {
			t.Errorf("dashboard ConfigMap %s/%s labels %v: want namespace 2024, team c, part-of shop", cm.Namespace, cm.Name, cm.Labels)
		}
	}
	if boards != 2 {
		t.Errorf("%d dashboard ConfigMaps, want 2", boards)
	}
}

// TestDashboardLabelsNull: `dashboards.labels: null` (Helm's way to drop a default map) renders;
// before, toYaml of nothing wrote "null" into the labels and helm template failed to parse it.
func TestDashboardLabelsNull(t *testing.T) {
	r, err := decode(helm(t, "template", "lock-exporter", chartDir, "--values",
		writeValues(t, "dashboards: {enabled: true, labels: null}\n")))
	if err != nil {
		t.Fatalf("strict decoding of helm template: %v", err)
	}
	if len(r.configMaps) != 3 {
		t.Errorf("%d ConfigMaps, want the configuration and two dashboards", len(r.configMaps))
	}
}

// TestImageDigest: image.digest pins the image by content, keeping the tag for the reader:
// repository:tag@digest, which the container runtime pulls by the digest alone.
func TestImageDigest(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for values, want := range map[string]string{
		`image: {digest: "` + digest + `"}`:              "ghcr.io/lockwatch/lock-exporter:" + chartAppVersion(t) + "@" + digest,
		`image: {tag: v9.9.9, digest: "` + digest + `"}`: "ghcr.io/lockwatch/lock-exporter:v9.9.9@" + digest,
	} {
		r, err := decode(helm(t, "template", "lock-exporter", chartDir, "--values", writeValues(t, values)))
		if err != nil {
			t.Fatalf("strict decoding of helm template: %v", err)
		}
		if got := r.deployments[0].Spec.Template.Spec.Containers[0].Image; got != want {
			t.Errorf("%s: image %q, want %q", values, got, want)
		}
	}
}

// TestServicePortBelow1024: service.port is the Service's port only. The exporter runs as user
// 65532 with every capability dropped, so it cannot bind a port below 1024 where the runtime
// keeps them privileged (containerd before 2.0); with the container listening on service.port,
// service.port: 80 crash-looped the pod. It listens on 9866, the Service maps its port onto it.
func TestServicePortBelow1024(t *testing.T) {
	r, err := decode(helm(t, "template", "lock-exporter", chartDir, "--values", writeValues(t, "service: {port: 80}\n")))
	if err != nil {
		t.Fatalf("strict decoding of helm template: %v", err)
	}
	c := r.deployments[0].Spec.Template.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9866 || c.Ports[0].Name != "metrics" {
		t.Errorf("container ports %+v, want metrics on 9866", c.Ports)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--web.listen-address=") && a != "--web.listen-address=:9866" {
			t.Errorf("container listens with %s, want :9866", a)
		}
	}
	svc := r.services[0]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service ports %+v, want 80 onto metrics", svc.Spec.Ports)
	}
}

// TestPodMonitorFindsWorkersInTheirNamespaces: the PodMonitor is created in the release's
// namespace (monitoring), the workers it is for run in their own, and without a
// namespaceSelector a PodMonitor selects pods of its own namespace alone: enabled with the
// defaults, it scraped no worker, and no alert on the library's metrics could fire. Pods opt in
// by label, so the default selects them in every namespace.
func TestPodMonitorFindsWorkersInTheirNamespaces(t *testing.T) {
	r, err := decode(helm(t, "template", "lock-exporter", chartDir, "--namespace", "monitoring",
		"--values", writeValues(t, "podMonitor: {enabled: true}\n")))
	if err != nil {
		t.Fatalf("strict decoding of helm template: %v", err)
	}
	if len(r.podMonitors) != 1 {
		t.Fatalf("%d PodMonitors, want 1", len(r.podMonitors))
	}
	if ns := r.podMonitors[0].Spec.NamespaceSelector; !ns.Any {
		t.Errorf("PodMonitor namespaceSelector %+v: selects only pods of its own namespace, monitoring", ns)
	}
}

// TestNotesNameTheImage: the notes helm prints after an install name the image that runs. They
// named the chart's appVersion whatever image.tag or image.digest said, so an install of another
// tag announced the wrong version. (helm template does not print notes, and helm install
// --dry-run asks a cluster for its version: the notes are rendered here through helm's engine.)
func TestNotesNameTheImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for values, want := range map[string]string{
		"":                                  "ghcr.io/lockwatch/lock-exporter:" + chartAppVersion(t),
		"image: {tag: v9.9.9}":              "ghcr.io/lockwatch/lock-exporter:v9.9.9",
		`image: {digest: "` + digest + `"}`: "ghcr.io/lockwatch/lock-exporter:" + chartAppVersion(t) + "@" + digest,
	} {
		first, _, _ := strings.Cut(renderNotes(t, values), "\n")
		if !strings.Contains(first, "("+want+")") {
			t.Errorf("%q: NOTES begin %q, want the image %s", values, first, want)
		}
	}
}

// renderNotes renders the chart's NOTES.txt for an install with the given values.
func renderNotes(t *testing.T, values string) string {
	t.Helper()
	ch, err := loader.Load(filepath.Join(repoRoot(t), chartDir))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	release := chartutil.ReleaseOptions{Name: "lock-exporter", Namespace: "monitoring", IsInstall: true}
	rv, err := chartutil.ToRenderValues(ch, vals, release, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	notes, ok := out[ch.Name()+"/templates/NOTES.txt"]
	if !ok {
		t.Fatal("the chart renders no NOTES.txt")
	}
	return notes
}
