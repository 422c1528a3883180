package pack

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// produce returns a generator of files with the given paths.
func produce(paths ...string) Generator {
	return func(packconfig.Config) ([]File, error) {
		var files []File
		for _, p := range paths {
			files = append(files, File{Path: p, Data: []byte(p)})
		}
		return files, nil
	}
}

func TestGenerateSortsByPath(t *testing.T) {
	files, err := Generate(packconfig.Default(), produce("dashboards/b.json", "alerts/z.yml"), produce("alerts/a.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if want := []string{"alerts/a.yml", "alerts/z.yml", "dashboards/b.json"}; !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
}

func TestGenerateRefuses(t *testing.T) {
	boom := errors.New("boom")
	failing := func(packconfig.Config) ([]File, error) { return nil, boom }
	tests := []struct {
		name       string
		generators []Generator
		want       string
	}{
		{"the same path twice", []Generator{produce("alerts/a.yml"), produce("alerts/a.yml")}, "generated twice"},
		{"an absolute path", []Generator{produce("/etc/a.yml")}, "not a clean relative path"},
		{"a path leaving the root", []Generator{produce("../a.yml")}, "not a clean relative path"},
		{"a path not in canonical form", []Generator{produce("alerts//a.yml")}, "not a clean relative path"},
		{"an empty path", []Generator{produce("")}, "not a clean relative path"},
		{"a generator's error", []Generator{produce("alerts/a.yml"), failing}, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(packconfig.Default(), tt.generators...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
