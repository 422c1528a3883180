package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testkit"
)

// imageRef matches a reference to the lock-exporter image with whatever follows it.
var imageRef = regexp.MustCompile(`lockwatch/lock-exporter(:[A-Za-z0-9._-]+)?`)

// TestImagePinnedToRelease: the Kubernetes manifests and the docs name the lock-exporter image by
// the release in VERSION, never :latest and never untagged, so what a user applies is what the
// release notes describe, and bumping VERSION without the manifests fails here.
func TestImagePinnedToRelease(t *testing.T) {
	root := testkit.RepoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not vMAJOR.MINOR.PATCH", version)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "deploy", "Dockerfile"))
	found := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imageRef.FindAllStringSubmatch(string(data), -1) {
			found++
			if m[1] != ":"+version {
				t.Errorf("%s: %s, want lockwatch/lock-exporter:%s", filepath.Base(f), m[0], version)
			}
		}
		if strings.Contains(string(data), "lock-exporter:latest") {
			t.Errorf("%s names lock-exporter:latest", filepath.Base(f))
		}
	}
	if found == 0 {
		t.Fatal("no lockwatch/lock-exporter image reference found; the Deployment must name one")
	}
}
