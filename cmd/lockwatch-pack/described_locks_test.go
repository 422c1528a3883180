package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/exporterfile"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/helmchart"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// lockNamespaces are the namespaces of the end-to-end pack configurations: Go locks in strings,
// Redisson locks in hashes, and leader leases that end by expiry on purpose: between them every
// namespace setting.
const lockNamespaces = `namespaces:
  - name: scheduler
    pattern: "scheduler:job:*"
    expected_ttl: 60s
    expected_renew_interval: 20s
    expected_max_hold: 30m
  - name: billing
    pattern: "redisson:billing:*"
    types: [hash]
    expected_ttl: 30s
    takeover_window: 2m
  - name: leader
    pattern: "leader:*"
    expected_ttl: 15s
    ends_by_expiry: true
`

// kubernetesLocks adds Redis behind Sentinels, with TLS and both passwords in Secrets.
const kubernetesLocks = lockNamespaces + `redis:
  mode: sentinel
  addrs: ["rediss://sentinel-0.redis:26379", "rediss://sentinel-1.redis:26379"]
  sentinel_master: locks
  username: lock-exporter
  tls:
    secret: redis-tls
    ca_file: /etc/lock-exporter/tls/ca.crt
  password:
    secret: {name: redis-auth, key: exporter-password}
  sentinel_password:
    secret: {name: sentinel-auth}
`

// binaries are the built programs the end-to-end tests run, nothing else of a checkout.
type binaries struct{ pack, exporter, helm, promtool string }

func buildBinaries(t *testing.T) binaries {
	t.Helper()
	dir := t.TempDir()
	return binaries{
		pack:     packBinary(t),
		exporter: testkit.BuildBinary(t, dir, "./cmd/lock-exporter"),
		helm:     helmBinary(t),
		promtool: testkit.Tool(t, "promtool"),
	}
}

// helmBinary is the helm of tools/helm/go.mod's tool directive.
func helmBinary(t *testing.T) string {
	t.Helper()
	root := testkit.RepoRoot(t)
	locate := exec.Command("go", "tool", "-modfile="+filepath.Join(root, "tools", "helm", "go.mod"), "-n", "helm")
	locate.Dir, locate.Env = root, append(os.Environ(), "GOWORK=off")
	bin, err := locate.Output()
	if err != nil {
		t.Fatalf("building helm (go tool -n helm in tools/helm): %v", err)
	}
	return strings.TrimSpace(string(bin))
}

// runOK runs bin in dir and fails the test unless it succeeds; it returns standard output.
func runOK(t *testing.T, dir, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+dir, "HELM_CACHE_HOME="+dir, "HELM_DATA_HOME="+dir)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, e.String())
	}
	return o.String()
}

// packFromConfig writes config into an empty directory and runs lockwatch-pack there; it returns
// the directory and the pack's root in it.
func packFromConfig(t *testing.T, bins binaries, config string) (work, out string) {
	t.Helper()
	work = t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "my-pack.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(t, work, bins.pack, "--config", "my-pack.yml", "--out", "pack")
	return work, filepath.Join(work, "pack")
}

// TestOneDescriptionOfTheLocks: from one pack configuration with two namespaces (one of Redisson
// hashes) behind Sentinels with TLS and Secrets, lockwatch-pack writes an exporter configuration
// the exporter's loader takes, chart values that helm renders into the same configuration, and
// manifests whose ConfigMap holds it and whose pod mounts the Secrets it names; the rules load,
// the dashboards are written, and the rule tests written for this (cluster-labelled) pack pass.
func TestOneDescriptionOfTheLocks(t *testing.T) {
	bins := buildBinaries(t)
	work, out := packFromConfig(t, bins, "cluster_labels: [cluster]\n"+kubernetesLocks)
	exporterFile := filepath.Join(out, filepath.FromSlash(exporterfile.Path))
	want := loadExporterConfig(t, exporterFile)
	if declared := declaredNamespaces(t, lockNamespaces); !reflect.DeepEqual(want.Namespaces, declared) {
		t.Errorf("the exporter file's namespaces\n%+v\nare not the pack configuration's\n%+v", want.Namespaces, declared)
	}
	if want.Redis.SentinelMaster != "locks" {
		t.Fatalf("the exporter file holds %+v", want.Redis)
	}
	if err := want.Redis.CheckAddresses(); err != nil {
		t.Errorf("the exporter refuses the generated redis section: %v", err)
	}

	rendered := runOK(t, work, bins.helm, "template", "lock-exporter", filepath.Join(out, helmchart.Dir),
		"--values", filepath.Join(out, filepath.FromSlash(helmchart.ValuesPath)))
	checkRendered(t, "helm template", rendered, want)
	manifests, err := os.ReadFile(filepath.Join(out, "deploy", "kubernetes", "lock-exporter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checkRendered(t, "deploy/kubernetes/lock-exporter.yaml", string(manifests), want)

	rules, _ := filepath.Glob(filepath.Join(out, "alerts", "*.yml"))
	runOK(t, work, bins.promtool, append([]string{"check", "rules"}, rules...)...)
	if dashboards, _ := filepath.Glob(filepath.Join(out, "dashboards", "*.json")); len(dashboards) == 0 {
		t.Error("no dashboards written")
	}
	// The pack's own rule tests, made for this configuration, pass on the promtool given.
	runOK(t, work, bins.pack, "test", "--out", "pack", "--promtool", bins.promtool)
}

// declaredNamespaces reads a pack configuration's namespaces: list as the exporter reads one.
func declaredNamespaces(t *testing.T, config string) []exporterconfig.Namespace {
	t.Helper()
	var doc struct {
		Namespaces yaml.Node `yaml:"namespaces"`
	}
	if err := yaml.Unmarshal([]byte(config), &doc); err != nil {
		t.Fatal(err)
	}
	list, err := exporterconfig.DecodeNamespaces(&doc.Namespaces)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// loadExporterConfig loads a configuration file with the exporter's loader.
func loadExporterConfig(t *testing.T, path string) exporterconfig.Config {
	t.Helper()
	cfg, err := exporterconfig.Load(path)
	if err != nil {
		t.Fatalf("the exporter's loader refuses %s: %v", path, err)
	}
	return cfg
}

// checkRendered finds the exporter's ConfigMap and Deployment in a multi-document manifest: the
// ConfigMap's file must load to want, the pod must mount every Secret the file names a path
// in, and no container may take a password from a literal.
func checkRendered(t *testing.T, what, manifest string, want exporterconfig.Config) {
	t.Helper()
	var configFile string
	var pod podSpec
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	for {
		var obj kubeObject
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		switch obj.Kind {
		case "ConfigMap":
			configFile = obj.Data["lock-exporter.yml"]
		case "Deployment":
			pod = obj.Spec.Template.Spec
		}
	}
	path := filepath.Join(t.TempDir(), "lock-exporter.yml")
	if err := os.WriteFile(path, []byte(configFile), 0o600); err != nil {
		t.Fatal(err)
	}
	got := loadExporterConfig(t, path)
	if !reflect.DeepEqual(got.Namespaces, want.Namespaces) || !reflect.DeepEqual(got.Redis, want.Redis) {
		t.Errorf("%s: the ConfigMap's configuration\n%+v\nis not the exporter file's\n%+v", what, got, want)
	}
	checkSecretMounts(t, what, pod, map[string]string{
		"/etc/lock-exporter/secrets/redis":          "redis-auth",
		"/etc/lock-exporter/secrets/redis-sentinel": "sentinel-auth",
		"/etc/lock-exporter/tls":                    "redis-tls",
	})
}

type kubeObject struct {
	Kind string            `yaml:"kind"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	Containers []struct {
		Env []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	} `yaml:"containers"`
	Volumes []struct {
		Name   string `yaml:"name"`
		Secret struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

// checkSecretMounts: each directory of want is a mount of the volume of its Secret, and no
// environment variable carries a password.
func checkSecretMounts(t *testing.T, what string, pod podSpec, want map[string]string) {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(pod.Containers))
	}
	secretOf := map[string]string{} // volume -> Secret
	for _, v := range pod.Volumes {
		secretOf[v.Name] = v.Secret.SecretName
	}
	mounted := map[string]string{} // directory -> Secret
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted[m.MountPath] = secretOf[m.Name]
	}
	for dir, secret := range want {
		if mounted[dir] != secret {
			t.Errorf("%s: %s mounts Secret %q, want %q", what, dir, mounted[dir], secret)
		}
	}
	for _, e := range pod.Containers[0].Env {
		if strings.Contains(e.Name, "PASSWORD") {
			t.Errorf("%s: the container takes %s from the environment", what, e.Name)
		}
	}
}

// TestGeneratedExporterFileServesEveryNamespace starts the exporter on the file lockwatch-pack
// wrote, against a real Redis with TLS and a password (by file), and reads each namespace's
// keys on /metrics. The password is in no file of the pack.
func TestGeneratedExporterFileServesEveryNamespace(t *testing.T) {
	pki := testkit.NewPKI(t)
	const password = "e2e-password-7f3a"
	server := redistest.Start(t, redistest.WithTLS(pki.ServerCert, pki.ServerKey, pki.CAFile),
		redistest.WithArgs("--tls-auth-clients", "no", "--requirepass", password))
	passwordFile := testkit.WriteFile(t, "redis-password", password+"\n")
	bins := binaries{pack: packBinary(t), exporter: testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")}
	_, out := packFromConfig(t, bins, lockNamespaces+"redis:\n  addrs: [\"rediss://"+server.Addr+"\"]\n"+
		"  tls: {ca_file: "+pki.CAFile+"}\n  password: {file: "+passwordFile+"}\n")
	assertNoFileHolds(t, out, password)

	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	// Seeded after the builds, which may take minutes on a loaded machine.
	seedTLSLocks(t, server.Addr, password, pki)
	exporter := exec.Command(bins.exporter, "--config.file", filepath.Join(out, filepath.FromSlash(exporterfile.Path)),
		"--web.listen-address", listen)
	var stderr bytes.Buffer
	exporter.Stderr = &stderr
	if err := exporter.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() { _ = exporter.Process.Kill(); _ = exporter.Wait() })
	t.Cleanup(stop)
	want := []string{`lock_keys{lock_namespace="scheduler"} 2`, `lock_keys{lock_namespace="billing"} 1`}
	if body, ok := waitForMetrics(t, "http://"+listen+"/metrics", want); !ok {
		stop() // its log is complete, and no longer written, once it has exited
		t.Fatalf("/metrics never showed %q:\n%s\nexporter log:\n%s", want, lockMetrics(body), stderr.String())
	}
}

// lockMetrics is the lock_ lines of an exposition, which say what the exporter saw.
func lockMetrics(body string) string {
	var lines []string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "lock_") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "")
}

// seedTLSLocks writes two Go locks (strings) and one Redisson lock (a hash) with expiries.
func seedTLSLocks(t *testing.T, addr, password string, pki *testkit.PKI) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, Password: password, TLSConfig: pki.ClientTLS()})
	defer client.Close()
	ctx := context.Background()
	pipe := client.TxPipeline()
	pipe.Set(ctx, "scheduler:job:1", "token-1", 10*time.Minute)
	pipe.Set(ctx, "scheduler:job:2", "token-2", 10*time.Minute)
	pipe.HSet(ctx, "redisson:billing:invoice-7", "8743c9c0-0795-4907-87fd-6c719a6b4586:1", 1)
	pipe.PExpire(ctx, "redisson:billing:invoice-7", 10*time.Minute)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitForMetrics polls url until its body holds every line of want, for up to two minutes (the
// exporter's first scrape builds its index; the machine may be loaded).
func waitForMetrics(t *testing.T, url string, want []string) (string, bool) {
	t.Helper()
	var body string
	client := &http.Client{Timeout: 10 * time.Second}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		if containsAll(body, want) {
			return body, true
		}
	}
	return body, false
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// assertNoFileHolds fails when a file under root contains secret.
func assertNoFileHolds(t *testing.T, root, secret string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the password", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPackNamespaceErrorsAreTheExportersOwn: a namespace mistake in the pack configuration
// makes lockwatch-pack exit 2 with lock-exporter's own message for the same namespaces in its
// --config.file, at the pack file's line, and write nothing.
func TestPackNamespaceErrorsAreTheExportersOwn(t *testing.T) {
	bins := binaries{pack: packBinary(t), exporter: testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")}
	for _, tt := range []struct{ name, namespaces, packLine string }{
		{"unknown field", "namespaces:\n  - name: a\n    pattern: 'a:*'\n  - name: b\n    patern: 'b:*'\n", "line 5: "},
		{"empty pattern", "namespaces:\n  - name: a\n    pattern: 'a:*'\n  - name: b\n    pattern: ''\n", "line 4: "},
		{"bad duration", "namespaces:\n  - name: a\n    pattern: 'a:*'\n    expected_ttl: 1 minute\n", "line 4: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			writeIn(t, work, "lock-exporter.yml", tt.namespaces)
			writeIn(t, work, "my-pack.yml", tt.namespaces+"redis: {addrs: [redis:6379]}\n")
			code, _, exporterErr := runPack(t, bins.exporter, work, "--config.file", "lock-exporter.yml")
			// Decoding errors name the file; validation errors name the setting alone.
			problem, found := strings.CutPrefix(strings.TrimSpace(exporterErr), "lock-exporter: ")
			problem = strings.TrimPrefix(problem, "config file lock-exporter.yml: ")
			if code != 2 || !found {
				t.Fatalf("lock-exporter: exit %d, %q", code, exporterErr)
			}
			code, _, packErr := runPack(t, bins.pack, work, "--config", "my-pack.yml", "--out", "pack")
			want := "lockwatch-pack: pack config my-pack.yml: " + tt.packLine + strings.TrimPrefix(problem, tt.packLine) + "\n"
			if code != 2 || packErr != want {
				t.Errorf("lockwatch-pack: exit %d, %q\nwant exit 2, %q", code, packErr, want)
			}
			if _, err := os.Stat(filepath.Join(work, "pack")); !os.IsNotExist(err) {
				t.Errorf("lockwatch-pack wrote files after refusing the configuration (%v)", err)
			}
		})
	}
}

func writeIn(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
