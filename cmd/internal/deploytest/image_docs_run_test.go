package deploytest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestImageDocumentedRun runs the `podman run` of docs/deploy.md's "The image" against a
// redis-server on 127.0.0.1, with its flags as written. Only what names this run's things is
// replaced: the image (LOCKWATCH_IMAGE), the published port (a free one on 127.0.0.1), the
// configuration directory and the Redis port behind host.containers.internal. A --runtime of
// LOCKWATCH_IMAGE_RUN_FLAGS is added, as the doc says to where crun refuses. `make image-test`
// runs it beside TestImage.
func TestImageDocumentedRun(t *testing.T) {
	image := os.Getenv("LOCKWATCH_IMAGE")
	if image == "" {
		t.Skip("set LOCKWATCH_IMAGE (make image-test does) to run the documented podman run")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("podman not found: apt-get install podman runc, or run bash .ci/run")
	}
	srv := redistest.Start(t)
	client := srv.Client(t)
	ctx := context.Background()
	if err := client.Set(ctx, "jobs:1", "token-never-exported", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "jobs:forever", "token-never-exported", 0).Err(); err != nil {
		t.Fatal(err)
	}
	confDir := t.TempDir()
	if err := os.Chmod(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(confDir, "exporter.yml"), "namespaces:\n  - {name: jobs, pattern: \"jobs:*\"}\n")
	_, redisPort, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	listen := testkit.UnusedAddr(t)
	args := documentedPodmanRun(t, image, map[string]string{
		"-p 9866:9866":                  "-p " + listen + ":9866",
		"./exporter-config:":            confDir + ":",
		"host.containers.internal:6379": "host.containers.internal:" + redisPort,
	})
	// Named, so that a container podman created but could not start is removed too.
	name := fmt.Sprintf("lockwatch-image-docs-run-%d", os.Getpid())
	args = slices.Insert(args, 2, "--name", name)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command(podman, "logs", name).CombinedOutput()
			t.Logf("podman %s\ncontainer log:\n%s", strings.Join(args[1:], " "), logs)
		}
		if out, err := exec.Command(podman, "rm", "--force", "--ignore", "--time", "2", name).CombinedOutput(); err != nil {
			t.Errorf("podman rm %s: %v: %s", name, err, out)
		}
	})
	podmanOut(t, podman, args[1:]...)
	base := "http://" + listen
	testkit.Eventually(t, time.Minute, "the container serves /-/healthy", func() bool {
		code, _ := httpGet(base + "/-/healthy")
		return code == http.StatusOK
	})
	code, metrics := httpGet(base + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, metrics)
	}
	want(t, "/metrics", metrics, "lock_exporter_up", nil, 1)
	want(t, "/metrics", metrics, "lock_keys", map[string]string{"lock_namespace": "jobs"}, 2)
	want(t, "/metrics", metrics, "lock_keys_without_ttl", map[string]string{"lock_namespace": "jobs"}, 1)
}

// documentedImage is the image a doc's command runs.
var documentedImage = regexp.MustCompile(`ghcr\.io/lockwatch/lock-exporter:\S+`)

// documentedPodmanRun is docs/deploy.md's `podman run` of the image as words, with image as its
// image, each key of replace replaced by its value, and --runtime of LOCKWATCH_IMAGE_RUN_FLAGS
// after `podman run`.
func documentedPodmanRun(t *testing.T, image string, replace map[string]string) []string {
	t.Helper()
	var cmd string
	for _, c := range podmanRunCommands(readRepoFile(t, "docs/deploy.md")) {
		if documentedImage.MatchString(c.text) {
			cmd = c.text
		}
	}
	if cmd == "" {
		t.Fatal("docs/deploy.md: no podman run of ghcr.io/lockwatch/lock-exporter")
	}
	run := documentedImage.ReplaceAllLiteralString(cmd, image)
	for from, to := range replace {
		if !strings.Contains(run, from) {
			t.Fatalf("docs/deploy.md's podman run has no %q to replace: %s", from, cmd)
		}
		run = strings.ReplaceAll(run, from, to)
	}
	words := strings.Fields(run)
	for _, f := range strings.Fields(os.Getenv("LOCKWATCH_IMAGE_RUN_FLAGS")) {
		if strings.HasPrefix(f, "--runtime=") {
			words = slices.Insert(words, 2, f)
		}
	}
	return words
}
