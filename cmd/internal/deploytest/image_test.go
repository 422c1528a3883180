package deploytest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// imageUser is the numeric user and group deploy/Dockerfile sets, which the Kubernetes
// Deployment and the Helm chart also set.
const imageUser = "65532"

// TestImage runs the image `make image` built (named by LOCKWATCH_IMAGE) against a real
// redis-server, the way a user runs it: the image's own user and entrypoint, a read-only root
// filesystem, every capability dropped, the configuration mounted read-only. It scrapes /metrics
// and /scrape?target= from outside and checks, from the host's view of the container's process,
// that it runs as 65532 on a read-only root. It needs root and podman; `make image-test` (run by
// .ci/run) sets LOCKWATCH_IMAGE and LOCKWATCH_IMAGE_RUN_FLAGS, the runtime settings this kind of
// machine needs (docs/deploy.md#the-image).
func TestImage(t *testing.T) {
	image := os.Getenv("LOCKWATCH_IMAGE")
	if image == "" {
		t.Skip("set LOCKWATCH_IMAGE (make image-test does) to run the image test")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("podman not found: apt-get install podman runc, or run bash .ci/run")
	}
	version := strings.TrimSpace(string(mustRead(t, filepath.Join(testkit.RepoRoot(t), "VERSION"))))

	// The image's metadata: user, entrypoint and the OCI version label.
	cfg := podmanOut(t, podman, "image", "inspect", "--format",
		`{{.Config.User}}|{{json .Config.Entrypoint}}|{{index .Labels "org.opencontainers.image.version"}}`, image)
	if want := imageUser + ":" + imageUser + `|["/lock-exporter"]|` + version; cfg != want {
		t.Errorf("image config = %q, want %q", cfg, want)
	}

	const password = "image-test-pw-51c0"
	srv, client := testkit.StartPasswordRedis(t, password)
	ctx := context.Background()
	if err := client.Set(ctx, "jobs:1", "token-never-exported", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "jobs:forever", "token-never-exported", 0).Err(); err != nil {
		t.Fatal(err)
	}
	down := redistest.Start(t)
	downAddr := down.Addr
	down.Kill()

	// The configuration directory is mounted read-only at /etc/lock-exporter; the container's user
	// must be able to read it.
	confDir := t.TempDir()
	if err := os.Chmod(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(confDir, "main.password"), password+"\n")
	writeFile(t, filepath.Join(confDir, "exporter.yml"), fmt.Sprintf(`redis:
  addr: %s
  password_file: /etc/lock-exporter/main.password
namespaces:
  - {name: jobs, pattern: "jobs:*", expected_ttl: 60s, expected_renew_interval: 20s}
targets:
  - {name: main, addr: %s, password_file: /etc/lock-exporter/main.password}
  - {name: down, addr: %s}
`, srv.Addr, srv.Addr, downAddr))

	listen := testkit.UnusedAddr(t)
	name := fmt.Sprintf("lockwatch-image-test-%d", os.Getpid())
	args := []string{"run", "--detach", "--name", name}
	args = append(args, strings.Fields(os.Getenv("LOCKWATCH_IMAGE_RUN_FLAGS"))...)
	// The host's network, so the exporter binds 127.0.0.1 only and reaches the loopback Redis;
	// the restrictions below are the ones the Deployment and the chart set.
	args = append(args, "--network=host", "--read-only", "--cap-drop=ALL",
		"--security-opt=no-new-privileges", "-v", confDir+":/etc/lock-exporter:ro",
		image, "--config.file=/etc/lock-exporter/exporter.yml", "--web.listen-address="+listen)
	podmanOut(t, podman, args...)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command(podman, "logs", name).CombinedOutput()
			t.Logf("container log:\n%s", logs)
		}
		if out, err := exec.Command(podman, "rm", "--force", "--time", "2", name).CombinedOutput(); err != nil {
			t.Errorf("podman rm %s: %v: %s", name, err, out)
		}
	})

	base := "http://" + listen
	testkit.Eventually(t, 30*time.Second, "the container serves /-/healthy", func() bool {
		code, _ := httpGet(base + "/-/healthy")
		return code == http.StatusOK
	})

	// From the host: the container's main process runs as 65532 with no capabilities, and its
	// root filesystem is mounted read-only.
	pid := podmanOut(t, podman, "inspect", "--format", "{{.State.Pid}}", name)
	status := string(mustRead(t, "/proc/"+pid+"/status"))
	for _, field := range []string{"Uid", "Gid"} {
		if ids := statusField(status, field); strings.Join(strings.Fields(ids), ",") != strings.Repeat(imageUser+",", 3)+imageUser {
			t.Errorf("container process %s: %q, want %s for real, effective, saved and fs", field, ids, imageUser)
		}
	}
	if capEff := statusField(status, "CapEff"); strings.Trim(capEff, "0") != "" {
		t.Errorf("container process CapEff = %s, want none", capEff)
	}
	if opts := rootMountOptions(t, pid); !strings.HasPrefix(opts+",", "ro,") {
		t.Errorf("container root filesystem mounted %q, want read-only", opts)
	}

	code, metrics := httpGet(base + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, metrics)
	}
	t.Logf("/metrics, first lines:\n%s\n...\n%s", firstLines(metrics, "lock_", 8), firstLines(metrics, "lock_key", 8))
	want(t, "/metrics", metrics, "lock_exporter_up", nil, 1)
	want(t, "/metrics", metrics, "lock_keys", map[string]string{"lock_namespace": "jobs"}, 2)
	want(t, "/metrics", metrics, "lock_keys_without_ttl", map[string]string{"lock_namespace": "jobs"}, 1)
	want(t, "/metrics", metrics, "lock_exporter_build_info", map[string]string{"version": version}, 1)

	code, scrape := httpGet(base + "/scrape?target=main")
	if code != http.StatusOK {
		t.Fatalf("/scrape?target=main: %d %s", code, scrape)
	}
	t.Logf("/scrape?target=main, first lines:\n%s", firstLines(scrape, "lock_", 8))
	want(t, "/scrape?target=main", scrape, "lock_exporter_up", nil, 1)
	want(t, "/scrape?target=main", scrape, "lock_keys", map[string]string{"lock_namespace": "jobs"}, 2)
	_, downScrape := httpGet(base + "/scrape?target=down")
	want(t, "/scrape?target=down", downScrape, "lock_exporter_up", nil, 0)

	for what, body := range map[string]string{"/metrics": metrics, "/scrape": scrape} {
		if strings.Contains(body, password) || strings.Contains(body, "token-never-exported") {
			t.Errorf("%s shows a password or a lock token", what)
		}
	}
	if out, err := exec.Command(podman, "logs", name).CombinedOutput(); err != nil || strings.Contains(string(out), password) {
		t.Errorf("the container log holds the password, or cannot be read (%v)", err)
	}
}

// podmanOut runs podman and returns its trimmed output, failing the test with it on an error.
func podmanOut(t *testing.T, podman string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, podman, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func httpGet(url string) (int, string) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// want checks one sample of a text exposition: the series name with at least the given labels.
func want(t *testing.T, what, body, name string, labels map[string]string, value float64) {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	mf, ok := families[name]
	if !ok {
		t.Errorf("%s: no %s", what, name)
		return
	}
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		got := m.GetGauge().GetValue()
		if got != value {
			t.Errorf("%s: %s%v = %v, want %v", what, name, labels, got, value)
		}
		return
	}
	t.Errorf("%s: no %s with labels %v", what, name, labels)
}

// statusField is one "Name:\tvalue" line of /proc/PID/status.
func statusField(status, name string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// rootMountOptions returns the per-mount options of the mount at "/" as the process sees it
// (field 6 of /proc/PID/mountinfo).
func rootMountOptions(t *testing.T, pid string) string {
	t.Helper()
	f, err := os.Open("/proc/" + pid + "/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// A later mount on "/" hides an earlier one, so the last one counts.
		if fields := strings.Fields(sc.Text()); len(fields) > 5 && fields[4] == "/" {
			opts = fields[5]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// firstLines is the first n lines of a scrape that start with prefix, for the test log.
func firstLines(body, prefix string, n int) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) && len(out) < n {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRepoFile is the repository file at rel (slash-separated, from the repository's root).
func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	return string(mustRead(t, filepath.Join(testkit.RepoRoot(t), filepath.FromSlash(rel))))
}
