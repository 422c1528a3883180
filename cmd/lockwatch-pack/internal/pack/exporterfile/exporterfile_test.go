package exporterfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestFileLoadsAsConfigured: the file says only the settings chosen, and the exporter's loader
// reads it back to the configuration of the pack's locks, for each Redis mode.
func TestFileLoadsAsConfigured(t *testing.T) {
	const namespaces = "namespaces:\n  - {name: jobs, pattern: 'jobs:*', expected_ttl: 1m, types: [string, hash]}\n  - {name: runs, pattern: 'runs:*', ends_by_expiry: true}\n"
	for _, redis := range []string{
		"redis: {addrs: [redis:6379], password: {file: /run/secrets/redis}}\n",
		"redis: {mode: cluster, addrs: [a:6379, b:6379], username: exporter}\n",
		"redis: {mode: sentinel, addrs: [s:26379], sentinel_master: m, sentinel_password: {secret: {name: s}}}\n",
	} {
		cfg, err := packconfig.Parse([]byte(namespaces + redis))
		if err != nil {
			t.Fatal(err)
		}
		files, err := Generate(cfg)
		if err != nil || len(files) != 1 || files[0].Path != Path {
			t.Fatalf("Generate: %v, %v", files, err)
		}
		if text := string(files[0].Data); strings.Contains(text, ": 0s") || strings.Contains(text, `""`) || strings.Contains(text, "scan:") {
			t.Errorf("the file writes settings left at their defaults:\n%s", text)
		}
		path := filepath.Join(t.TempDir(), "lock-exporter.yml")
		if err := os.WriteFile(path, files[0].Data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := exporterconfig.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want := Config(cfg)
		if !reflect.DeepEqual(got.Namespaces, want.Namespaces) || got.Scan != exporterconfig.Defaults().Scan {
			t.Errorf("loaded %+v\nwant %+v", got, want)
		}
		if got.Redis.Addr == exporterconfig.DefaultRedisAddr {
			got.Redis.Addr = "" // the loader's default where the file gives none
		}
		if !reflect.DeepEqual(got.Redis, want.Redis) {
			t.Errorf("loaded redis %+v\nwant %+v", got.Redis, want.Redis)
		}
	}
}

// TestNoFileWithoutLocks: the default configuration writes no exporter file.
func TestNoFileWithoutLocks(t *testing.T) {
	if files, err := Generate(packconfig.Default()); err != nil || len(files) != 0 {
		t.Errorf("Generate(Default()) = %v, %v; want nothing", files, err)
	}
}
