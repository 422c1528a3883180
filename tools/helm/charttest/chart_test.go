package charttest

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// matrix is the set of values the chart is rendered with: each mode and toggle at least once.
var matrix = map[string]string{
	"defaults": ``,
	"single with everything on": `
redis: {addr: "redis.db:6379", username: lock-exporter, existingSecret: redis-auth, existingSecretPasswordKey: pw}
serviceMonitor: {enabled: true, interval: 15s, scrapeTimeout: 10s}
podMonitor: {enabled: true}
prometheusRule: {enabled: true}
dashboards: {enabled: true, namespace: grafana}
monitoringLabels: {release: kube-prometheus-stack}
commonLabels: {team: platform}
reload: {enabled: true, rollOnConfigChange: false}
scan: {top_k: 10, timeout: 8s}
extraArgs: ["--scan.max-keys=50000"]
`,
	"targets only": `
redis: {addr: ""}
targets:
  - {name: payments, addr: "redis-payments:6379", existingSecret: redis-payments}
  - name: orders
    cluster_addrs: ["redis-orders-0:6379", "redis-orders-1:6379"]
    existingSecret: redis-orders
    existingSecretPasswordKey: redis-password
    namespaces: [{name: fulfilment, pattern: "orders:lock:*", expected_ttl: 30s}]
  - {name: "legacy.redis:6379", addr: "legacy:6379"}
serviceMonitor: {enabled: true}
prometheusRule: {enabled: true}
`,
	"single and targets": `
targets:
  - {name: payments, addr: "redis-payments:6379"}
serviceMonitor: {enabled: true}
`,
	"no GOMEMLIMIT":                   `goMemLimit: ""`,
	"lowered memory limit":            "resources: {limits: {memory: 96Mi}}\ngoMemLimit: 76MiB",
	"memory limit in another unit":    "resources: {limits: {memory: 128M}}\ngoMemLimit: 100MiB",
	"memory limit not in whole units": "resources: {limits: {memory: 0.1Gi}}",
	"sentinel": `
redis:
  addr: ""
  sentinel_addrs: ["sentinel-0:26379", "sentinel-1:26379"]
  sentinel_master: mymaster
  existingSecret: redis
  tls: {ca_file: /etc/lock-exporter/tls/ca.pem}
extraVolumes: [{name: tls, secret: {secretName: redis-ca}}]
extraVolumeMounts: [{name: tls, mountPath: /etc/lock-exporter/tls, readOnly: true}]
fullnameOverride: locks
`,
}

func TestLint(t *testing.T) {
	helm(t, "lint", "--strict", chartDir)
	for name, values := range matrix {
		t.Run(name, func(t *testing.T) {
			helm(t, "lint", "--strict", chartDir, "--values", writeValues(t, values))
		})
	}
}

// TestTemplateMatrix renders every case strictly decoded and checks what the chart promises:
// the exporter runs as non-root on a read-only root filesystem within 128Mi, every password is
// a mounted Secret file the configuration names, the monitors select what they should, and the
// reload flag appears exactly when asked for.
func TestTemplateMatrix(t *testing.T) {
	appVersion := chartAppVersion(t)
	for name, values := range matrix {
		t.Run(name, func(t *testing.T) {
			var v chartValues
			if err := yaml.Unmarshal([]byte(values), &v); err != nil {
				t.Fatal(err)
			}
			r := renderDecoded(t, chartDir, writeValues(t, values))
			if len(r.deployments) != 1 || len(r.services) != 1 {
				t.Fatalf("%d Deployments, %d Services, want 1 each", len(r.deployments), len(r.services))
			}
			d := r.deployments[0]
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
				t.Errorf("pod securityContext %+v, want runAsNonRoot and user 65532", sc)
			}
			if sc := c.SecurityContext; sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) || sc.AllowPrivilegeEscalation == nil ||
				*sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container securityContext %+v, want read-only root, no privilege escalation, drop ALL", sc)
			}
			if limit := c.Resources.Limits.Memory(); limit.IsZero() || limit.Cmp(resource.MustParse("128Mi")) > 0 {
				t.Errorf("memory limit %v, want at most 128Mi", limit)
			}
			checkGoMemLimit(t, c, v.GoMemLimit)
			if want := "ghcr.io/lockwatch/lock-exporter:" + appVersion; c.Image != want {
				t.Errorf("image %q, want %q", c.Image, want)
			}
			if got := slices.Contains(c.Args, "--web.enable-lifecycle"); got != v.Reload.Enabled {
				t.Errorf("--web.enable-lifecycle passed: %v, reload.enabled: %v", got, v.Reload.Enabled)
			}
			checkPasswordFiles(t, r, d.Spec.Template.Spec)
			if !labels.SelectorFromSet(d.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Error("the Deployment's selector does not select its pods")
			}
			svc := r.services[0]
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Error("the Service does not select the exporter's pods")
			}

			wantMonitors := map[string]int{
				"ServiceMonitor": boolCount(v.ServiceMonitor.Enabled), "PodMonitor": boolCount(v.PodMonitor.Enabled),
				"PrometheusRule": boolCount(v.PrometheusRule.Enabled),
			}
			if got := (map[string]int{"ServiceMonitor": len(r.serviceMonitors), "PodMonitor": len(r.podMonitors), "PrometheusRule": len(r.rules)}); !mapsEqual(got, wantMonitors) {
				t.Errorf("monitoring objects %v, want %v", got, wantMonitors)
			}
			monitoringObjects := map[string]map[string]string{}
			for _, sm := range r.serviceMonitors {
				monitoringObjects["ServiceMonitor"] = sm.Labels
				if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
					t.Error("the ServiceMonitor does not select the Service")
				}
				if got, want := len(sm.Spec.Endpoints), 1+len(v.Targets); got != want {
					t.Errorf("ServiceMonitor has %d endpoints, want /metrics and one per target: %d", got, want)
				}
				for i, tg := range v.Targets {
					ep := sm.Spec.Endpoints[i+1]
					if ep.Path != "/scrape" || !slices.Equal(ep.Params["target"], []string{tg.Name}) ||
						len(ep.RelabelConfigs) == 0 || ep.RelabelConfigs[0].TargetLabel != "instance" || ep.RelabelConfigs[0].Replacement == nil || *ep.RelabelConfigs[0].Replacement != tg.Name {
						t.Errorf("endpoint of target %q: path %q params %v relabelings %+v", tg.Name, ep.Path, ep.Params, ep.RelabelConfigs)
					}
				}
			}
			for _, pm := range r.podMonitors {
				monitoringObjects["PodMonitor"] = pm.Labels
			}
			for _, pr := range r.rules {
				monitoringObjects["PrometheusRule"] = pr.Labels
			}
			for kind, l := range monitoringObjects {
				for k, want := range v.MonitoringLabels {
					if l[k] != want {
						t.Errorf("%s label %s=%q, want %q (monitoringLabels)", kind, k, l[k], want)
					}
				}
			}

			boards := 0
			for _, cm := range r.configMaps {
				if !strings.Contains(cm.Name, "-dashboard-") {
					continue
				}
				boards++
				if cm.Labels["grafana_dashboard"] != "1" {
					t.Errorf("dashboard ConfigMap %s lacks grafana_dashboard: \"1\"", cm.Name)
				}
				if want := v.Dashboards.Namespace; want != "" && cm.Namespace != want {
					t.Errorf("dashboard ConfigMap %s in %q, want %q", cm.Name, cm.Namespace, want)
				}
				for file, data := range cm.Data {
					committed := readRepoFile(t, path.Join("dashboards", file))
					if data != string(committed) {
						t.Errorf("ConfigMap %s: %s differs from dashboards/%s: %s", cm.Name, file, file, firstDifference(data, string(committed)))
					}
				}
			}
			if want := 2 * boolCount(v.Dashboards.Enabled); boards != want {
				t.Errorf("%d dashboard ConfigMaps, want %d", boards, want)
			}
		})
	}
}

// checkPasswordFiles: every password_file of the rendered exporter configuration is a file of a
// mounted Secret volume, and no password appears in the ConfigMap or the environment.
func checkPasswordFiles(t *testing.T, r *rendered, pod corev1.PodSpec) {
	t.Helper()
	var config string
	for _, cm := range r.configMaps {
		if c, ok := cm.Data["lock-exporter.yml"]; ok {
			config = c
		}
	}
	if config == "" {
		t.Fatal("no ConfigMap holds lock-exporter.yml")
	}
	if strings.Contains(config, "password:") {
		t.Errorf("the configuration holds a password:\n%s", config)
	}
	for _, e := range pod.Containers[0].Env {
		if strings.Contains(strings.ToUpper(e.Name), "PASSWORD") {
			t.Errorf("password in the environment: %s", e.Name)
		}
	}
	secretMounts := map[string]string{} // mount path -> Secret
	for _, vol := range pod.Volumes {
		if vol.Secret == nil {
			continue
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name == vol.Name {
				for _, item := range vol.Secret.Items {
					secretMounts[path.Join(m.MountPath, item.Path)] = vol.Secret.SecretName
				}
			}
		}
	}
	for _, line := range strings.Split(config, "\n") {
		if _, file, ok := strings.Cut(line, "password_file: "); ok {
			if _, mounted := secretMounts[file]; !mounted {
				t.Errorf("password_file %s is no mounted Secret file (mounted: %v)", file, secretMounts)
			}
			delete(secretMounts, file)
		}
	}
	for file, secret := range secretMounts {
		if !strings.HasPrefix(file, "/etc/lock-exporter/tls") {
			t.Errorf("Secret %s mounted at %s but the configuration does not name it", secret, file)
		}
	}
}

// TestBadValuesRefused: the schema and the chart refuse what would deploy something broken or
// leak a password: no Redis at all, an unknown key, a plain-text password, the latest tag.
func TestBadValuesRefused(t *testing.T) {
	for name, c := range map[string]struct{ values, want string }{
		"no Redis and no targets":  {`redis: {addr: ""}`, "set redis.addr"},
		"unknown key":              {`serviceMonitor: {enable: true}`, "enable"},
		"plain-text password":      {`redis: {password: hunter2}`, "password"},
		"latest":                   {`image: {tag: latest}`, `image.tag "latest" is refused`},
		"target without name":      {`targets: [{addr: "r:6379"}]`, "name"},
		"GOMEMLIMIT in k8s syntax": {`goMemLimit: 100Mi`, "goMemLimit"}, // Go refuses "Mi" and would not start
		// Prometheus refuses a scrape config whose timeout exceeds its interval ("scrape timeout
		// greater than scrape interval"): the exporter would go unscraped. 5s with the default
		// 10s timeout, and a combined duration the check must add up.
		"scrape timeout over the interval": {`serviceMonitor: {enabled: true, interval: 5s}`, "serviceMonitor.scrapeTimeout"},
		// A tag is not a digest: "repo:sha256:…" is no image reference, and the pod would never start.
		"digest as the tag": {`image: {tag: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`, "tag"},
		"short digest":      {`image: {digest: "sha256:0123"}`, "digest"},
		// Flags the chart sets and its probes, Service and monitors depend on: passed again in
		// extraArgs, the later one won, and the probes or the ServiceMonitor hit nothing.
		"listen address in extraArgs": {`extraArgs: ["--web.listen-address=:8080"]`, "--web.listen-address"},
		"telemetry path in extraArgs": {`extraArgs: ["--web.telemetry-path", "/m"]`, "--web.telemetry-path"},
		"config file in extraArgs":    {`extraArgs: ["--config.file=/etc/other.yml"]`, "--config.file"},
		// What the exporter refuses at start (exit 2, a crash-looping pod) fails helm template.
		"no namespaces":             {`namespaces: []`, "namespaces"},
		"target without namespaces": {"redis: {addr: \"\"}\nnamespaces: []\ntargets: [{name: a, addr: \"a:6379\"}]", "target \"a\""},
		"duplicate target names":    {`targets: [{name: a, addr: "a:6379"}, {name: a, addr: "b:6379"}]`, "\"a\""},
		"duplicate namespace names": {`namespaces: [{name: jobs, pattern: "a:*"}, {name: jobs, pattern: "b:*"}]`, "\"jobs\""},
		// A URL's password would sit in the ConfigMap (the exporter then refuses it, too late).
		"password in redis.addr":      {`redis: {addr: "redis://:hunter2@r:6379"}`, "password"},
		"password in a cluster addr":  {`redis: {addr: "", cluster_addrs: ["rediss://u:hunter2@r:6379"]}`, "password"},
		"password in a target's addr": {`targets: [{name: a, addr: "redis://u:hunter2@a:6379"}]`, "password"},
		"password in extraArgs":       {`extraArgs: ["--redis.addr=redis://:hunter2@r:6379"]`, "password"},
		"combined durations":          {`serviceMonitor: {enabled: true, interval: 1m, scrapeTimeout: 1m500ms}`, "serviceMonitor.scrapeTimeout"},
		// A GOMEMLIMIT at or above the container's memory limit: the garbage collector does not
		// work harder before the kernel kills the pod (the default 100MiB under a lowered limit).
		"GOMEMLIMIT above a lowered limit": {`resources: {limits: {memory: 64Mi}}`, "goMemLimit"},
		"GOMEMLIMIT equal to the limit":    {"resources: {limits: {memory: 134217728}}\ngoMemLimit: 128MiB", "goMemLimit"},
		"GOMEMLIMIT above a decimal limit": {`resources: {limits: {memory: 100M}}`, "goMemLimit"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, err := tryHelm(t, "template", "lock-exporter", chartDir, "--values", writeValues(t, c.values))
			if err == nil {
				t.Fatalf("helm template accepted %s", c.values)
			}
			if !strings.Contains(string(stderr), c.want) {
				t.Errorf("error does not mention %q:\n%s", c.want, stderr)
			}
		})
	}
}

// chartValues is the part of the values the checks read.
type chartValues struct {
	Targets []struct {
		Name string `json:"name"`
	} `json:"targets"`
	Reload           struct{ Enabled bool } `json:"reload"`
	ServiceMonitor   struct{ Enabled bool } `json:"serviceMonitor"`
	PodMonitor       struct{ Enabled bool } `json:"podMonitor"`
	PrometheusRule   struct{ Enabled bool } `json:"prometheusRule"`
	MonitoringLabels map[string]string      `json:"monitoringLabels"`
	Dashboards       struct {
		Enabled   bool
		Namespace string
	} `json:"dashboards"`
	GoMemLimit *string `json:"goMemLimit"`
}

// checkGoMemLimit: the container's GOMEMLIMIT is the values' goMemLimit (100MiB by default, none
// when set to ""), and below the memory limit, or Go would not collect before the kernel kills.
func checkGoMemLimit(t *testing.T, c corev1.Container, set *string) {
	t.Helper()
	want := "100MiB"
	if set != nil {
		want = *set
	}
	got := ""
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			got = e.Value
		}
	}
	if got != want {
		t.Fatalf("GOMEMLIMIT %q, want %q", got, want)
	}
	if got == "" {
		return
	}
	n, unit := strings.TrimRightFunc(got, func(r rune) bool { return r < '0' || r > '9' }), strings.TrimLeft(got, "0123456789")
	shift := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[unit]
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", got, err)
	}
	if limit := c.Resources.Limits.Memory().Value(); v<<shift >= limit {
		t.Errorf("GOMEMLIMIT %s is not below the memory limit (%d bytes)", got, limit)
	}
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	var c struct {
		AppVersion string `json:"appVersion"`
		Version    string `json:"version"`
	}
	if err := yaml.Unmarshal(readRepoFile(t, chartDir+"/Chart.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	release := strings.TrimSpace(string(readRepoFile(t, "VERSION")))
	if c.AppVersion != release || "v"+c.Version != release {
		t.Errorf("Chart.yaml version %q, appVersion %q; VERSION is %q", c.Version, c.AppVersion, release)
	}
	return c.AppVersion
}

func readRepoFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(data)
}

func isTrue(b *bool) bool { return b != nil && *b }

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, gl, wl)
		}
	}
	return "no line differs"
}
