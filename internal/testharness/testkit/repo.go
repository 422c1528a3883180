package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// FindRepoRoot walks up from the working directory (the package's directory under `go test`)
// to the checkout's root, the directory holding go.work (every module of the repository is in
// that workspace). It is for TestMain, where there is no testing.TB yet.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// RepoRoot is FindRepoRoot, failing the test when there is no checkout around it.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := FindRepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// GoBinary is the go command on PATH, or else the one of the toolchain that built the test:
// `go test` puts its own on PATH, an IDE running the test binary may not.
func GoBinary() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

var toolPaths sync.Map // tool name → path or error

// Tool returns the path of a tool of tools/go.mod (promtool, amtool, prometheus), built or taken
// from the build cache by `go tool -n`, so tests run the pinned version without a go wrapper
// process around it. The path is looked up once per test binary.
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	v, ok := toolPaths.Load(name)
	if !ok {
		root := RepoRoot(tb)
		cmd := exec.Command(GoBinary(), "tool", "-modfile="+filepath.Join(root, "tools", "go.mod"), "-n", name)
		// tools/go.mod is not in the workspace (go.work): -modfile works only with workspace mode off.
		cmd.Env = append(os.Environ(), "GOWORK=off")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			v = fmt.Errorf("go tool -n %s: %v", name, err)
		} else {
			v = strings.TrimSpace(string(out))
		}
		toolPaths.Store(name, v)
	}
	if err, isErr := v.(error); isErr {
		tb.Fatal(err)
	}
	return v.(string)
}

// RunTool runs a tool of tools/go.mod in the checkout's root, so that the repository paths of
// its arguments resolve, and returns its standard output; a failure fails the test with both
// outputs.
func RunTool(tb testing.TB, name string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(Tool(tb, name), args...)
	cmd.Dir = RepoRoot(tb)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// Build runs `go build` on pkg (relative to the checkout root, e.g. "./cmd/lock-exporter") and
// returns the binary's path in dir, named after the package's directory. It is for builds
// shared by a whole test binary (in a sync.Once), where there is no testing.TB.
func Build(dir, pkg string) (string, error) {
	root, err := FindRepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, path.Base(pkg))
	cmd := exec.Command(GoBinary(), "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// BuildBinary is Build, failing the test when the build fails.
func BuildBinary(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	bin, err := Build(dir, pkg)
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}
