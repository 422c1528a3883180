package dashboards

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockwatch/lockwatch/internal/packconfig"
)

var update = flag.Bool("update", false, "rewrite the committed dashboard JSON instead of comparing")

// generated renders the dashboards for the default pack config, the
// configuration the committed files come from.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatalf("Generate(Default()): %v", err)
	}
	return files
}

// TestCommittedJSONMatchesGenerator fails when the committed dashboards/*.json
// differ from what the builders produce, so a change to the Go builders cannot
// ship without regenerated JSON (make generate) and vice versa.
func TestCommittedJSONMatchesGenerator(t *testing.T) {
	files := generated(t)
	if *update {
		for name, b := range files {
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	committed, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := committed, slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Errorf("dashboards/*.json = %v, generator writes %v; run make generate and commit", got, want)
	}
	for _, name := range committed {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := files[name]; ok && !bytes.Equal(b, want) {
			t.Errorf("%s differs from the generator output; run make generate and commit", name)
		}
	}
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

func TestWrite(t *testing.T) {
	root := t.TempDir()
	if err := Write(packconfig.Default(), root); err != nil {
		t.Fatal(err)
	}
	for name, want := range generated(t) {
		got, err := os.ReadFile(filepath.Join(root, Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Write wrote a different %s than Generate returns", name)
		}
	}
	// A file where the dashboards directory should be makes writing fail
	// with an error instead of a panic or a partial silent success.
	blocked := t.TempDir()
	if err := os.WriteFile(filepath.Join(blocked, Dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(packconfig.Default(), blocked); err == nil {
		t.Error("Write into a path blocked by a file succeeded")
	}
}
