package releasetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/internal/testharness/modproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

const base = "github.com/lockwatch/lockwatch"

// published are the modules a release makes public, by directory: the library, the exporter
// and demo commands, the pack generator and the rueidis adapter. (integration, bench, tools and
// observe/peertest are the repository's own test and tool modules.)
var published = map[string]string{
	".":                      base,
	"cmd":                    base + "/cmd",
	"cmd/lockwatch-pack":     base + "/cmd/lockwatch-pack",
	"observe/rueidisobserve": base + "/observe/rueidisobserve",
}

// outside is a go command run as an outside user runs it: in dir (outside the repository),
// with no workspace, modules from the file proxy first and then, for everything else, from
// this machine's module cache read as a proxy (so the test needs no network), a module cache
// of its own (the real one must not keep a lockwatch release that was never tagged), no
// checksum database (the proxy's lockwatch zips are not in it).
type outside struct {
	env     []string
	version string
}

func newOutside(t *testing.T) *outside {
	t.Helper()
	root := testkit.RepoRoot(t)
	version := readVersion(t, root)
	proxy := t.TempDir()
	for dir, path := range published {
		if err := modproxy.Add(proxy, path, version, filepath.Join(root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	realCache := strings.TrimSpace(run(t, root, nil, testkit.GoBinary(), "env", "GOMODCACHE"))
	env := []string{
		"GOWORK=off",
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(realCache, "cache", "download")),
		"GOSUMDB=off", "GONOSUMDB=" + base, "GOPRIVATE=",
		// -modcacherw: t.TempDir can remove the module cache afterwards. -trimpath: the build
		// cache then reuses what an earlier run compiled from another temporary module cache.
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOMODCACHE=" + t.TempDir(),
		"GOTOOLCHAIN=local",
	}
	return &outside{env: env, version: version}
}

// goCmd runs the go command in dir with the outside environment plus extra, and returns its
// standard output.
func (o *outside) goCmd(t *testing.T, dir string, extra []string, args ...string) string {
	t.Helper()
	return run(t, dir, append(append([]string{}, o.env...), extra...), testkit.GoBinary(), args...)
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", name, strings.Join(args, " "), dir, err, out, stderr.String())
	}
	return string(out)
}

func readVersion(t *testing.T, root string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}
