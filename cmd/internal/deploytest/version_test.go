package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// taggedImage matches the lock-exporter image with a concrete tag (a placeholder such as
// :<version> is not one).
var taggedImage = regexp.MustCompile(`lockwatch/lock-exporter:([A-Za-z0-9][A-Za-z0-9._-]*)`)

// imageField matches a Kubernetes container's image: field.
var imageField = regexp.MustCompile(`(?m)^\s*image:\s*(\S+)`)

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
		for _, m := range taggedImage.FindAllStringSubmatch(string(data), -1) {
			found++
			if m[1] != version {
				t.Errorf("%s: %s, want lockwatch/lock-exporter:%s", filepath.Base(f), m[0], version)
			}
		}
		if filepath.Ext(f) == ".yaml" {
			for _, m := range imageField.FindAllStringSubmatch(string(data), -1) {
				if !strings.HasSuffix(m[1], ":"+version) {
					t.Errorf("%s: image %s is not pinned to %s", filepath.Base(f), m[1], version)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no lockwatch/lock-exporter image reference found; the Deployment must name one")
	}
}
