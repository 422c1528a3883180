package manifests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestDescribedLocksReplaceTheExample: with namespaces, lock-exporter.yaml holds them and no
// longer the example namespaces, Redis address or the password from the environment; the
// Secrets named are mounted; the rest of the static manifest is unchanged.
func TestDescribedLocksReplaceTheExample(t *testing.T) {
	cfg, err := packconfig.Parse([]byte(`namespaces:
  - {name: orders, pattern: "orders:lock:*", expected_ttl: 30s}
redis:
  addrs: [redis-locks.data:6379]
  password: {secret: {name: redis-locks}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(generate(t, cfg)["lock-exporter.yaml"])
	example := string(generate(t, packconfig.Default())["lock-exporter.yaml"])
	for _, want := range []string{
		"pattern: orders:lock:*", "addr: redis-locks.data:6379", "password_file: /etc/lock-exporter/secrets/redis/password",
		"secretName: redis-locks", "--config.file=/etc/lock-exporter/config/lock-exporter.yml",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the manifest lacks %q", want)
		}
	}
	for _, gone := range []string{"scheduler:job:*", "redis-master.redis.svc.cluster.local", "LOCK_EXPORTER_REDIS_PASSWORD", "kustomize"} {
		if strings.Contains(got, gone) {
			t.Errorf("the manifest still holds the example's %q", gone)
		}
	}
	service := example[strings.LastIndex(example, "\n---\n"):]
	if !strings.HasSuffix(got, service) {
		t.Errorf("the Service changed:\n%s", got[strings.LastIndex(got, "\n---\n"):])
	}
}

// TestDescribedLocksNeedTheStaticParts: a static manifest without one of the parts replaced is an
// error naming the part, never a half-changed file.
func TestDescribedLocksNeedTheStaticParts(t *testing.T) {
	cfg, err := packconfig.Parse([]byte("namespaces: [{name: a, pattern: 'a:*'}]\nredis: {addrs: [r:6379]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	static, err := static.ReadFile("static/" + exporterFile)
	if err != nil {
		t.Fatal(err)
	}
	moved := bytes.Replace(static, []byte("          volumeMounts:\n"), []byte("          mounts:\n"), 1)
	if _, err := exporterManifest(moved, cfg); err == nil || !strings.Contains(err.Error(), "the volumes") {
		t.Errorf("exporterManifest of a static file without volumeMounts: %v, want an error naming the volumes", err)
	}
}
