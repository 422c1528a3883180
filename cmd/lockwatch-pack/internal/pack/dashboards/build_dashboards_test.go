package dashboards

import (
	"bytes"
	"maps"
	"path"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// generate renders the dashboards for cfg, keyed by file name.
func generate(t *testing.T, cfg packconfig.Config) map[string][]byte {
	t.Helper()
	files, err := Generate(cfg)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	byName := make(map[string][]byte, len(files))
	for _, f := range files {
		if path.Dir(f.Path) != Dir {
			t.Errorf("%s is not under %s/", f.Path, Dir)
		}
		byName[path.Base(f.Path)] = f.Data
	}
	return byName
}

// generated renders the dashboards for the default pack config, the
// configuration the committed files come from.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	return generate(t, packconfig.Default())
}

func TestGenerateIsDeterministic(t *testing.T) {
	first := generated(t)
	for range 5 {
		again := generated(t)
		if !maps.EqualFunc(first, again, bytes.Equal) {
			t.Fatal("two Generate runs on the same config differ")
		}
	}
}

func TestGenerateRejectsInvalidConfig(t *testing.T) {
	cfg := packconfig.Default()
	cfg.Dashboards.StalestKeys = 0
	if _, err := Generate(cfg); err == nil {
		t.Fatal("Generate accepted stalest_keys: 0")
	}
}
