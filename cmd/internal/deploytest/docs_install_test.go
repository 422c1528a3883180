package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// releaseInstall is a `go install` or `go get` of this project's modules at a version: the
// version is the capture.
var releaseInstall = regexp.MustCompile(`\bgo (?:install|get)\b.*\bgithub\.com/lockwatch/lockwatch\S*@(\S+)`)

// releasePlaceholder is the version the release procedure writes for the release being made.
const releasePlaceholder = "vX.Y.Z"

// installedVersion is the version a doc's command line installs or requires from the module
// proxy, "" when the line does neither.
func installedVersion(line string) string {
	m := releaseInstall.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return strings.TrimRight(m[1], "`")
}

func TestInstalledVersion(t *testing.T) {
	tests := []struct {
		line string
		want string
	}{
		{"go install github.com/lockwatch/lockwatch/cmd/lockwatch-pack@v0.1.0", "v0.1.0"},
		{"GOBIN=/tmp go install github.com/lockwatch/lockwatch/cmd/lock-exporter@latest", "latest"},
		{"go get github.com/lockwatch/lockwatch@vX.Y.Z", releasePlaceholder},
		{"   go get github.com/lockwatch/lockwatch@0eb8dce   # a commit", "0eb8dce"},
		{"go install ./cmd/lockwatch-pack", ""},
		{"go get github.com/redis/go-redis/v9@v9.23.0", ""},
		{"go mod edit -replace github.com/lockwatch/lockwatch=../lockwatch", ""},
	}
	for _, tt := range tests {
		if got := installedVersion(tt.line); got != tt.want {
			t.Errorf("installedVersion(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestDocInstallLinesNeedNoRelease: no release of lockwatch is published, so a command a doc gives
// a reader to run (a line of a fenced code block) that installs or requires one of its modules
// from the module proxy fails ("403 Forbidden … This module version is not available"). Such a
// line is only allowed in the release procedure, with the vX.Y.Z of the release being made;
// everything else builds from a clone, and the library is required through a replace.
func TestDocInstallLinesNeedNoRelease(t *testing.T) {
	root := testkit.RepoRoot(t)
	for _, doc := range readDocs(t, root) {
		for _, block := range codeBlocks(doc.text) {
			for _, l := range block {
				if v := installedVersion(l.text); v != "" && v != releasePlaceholder {
					t.Errorf("%s:%d: %q installs a release (@%s) that the module proxy does not serve; "+
						"build from a clone (see README.md), or write @%s in the release procedure",
						doc.rel, l.number, strings.TrimSpace(l.text), v, releasePlaceholder)
				}
			}
		}
	}
}

// docLine is a line of a doc with its 1-based number.
type docLine struct {
	number int
	text   string
}

// codeBlocks are the fenced code blocks of a Markdown text, each as its lines.
func codeBlocks(text string) [][]docLine {
	var blocks [][]docLine
	var block []docLine
	inBlock := false
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "```") && inBlock:
			blocks = append(blocks, block)
			block, inBlock = nil, false
		case strings.HasPrefix(strings.TrimSpace(line), "```"):
			inBlock = true
		case inBlock:
			block = append(block, docLine{number: i + 1, text: line})
		}
	}
	return blocks
}

// replaceLine is README's command that points an outside module at a clone of the library.
var replaceLine = regexp.MustCompile(`^go mod edit -replace github\.com/lockwatch/lockwatch=(\S+)$`)

// TestReadmeLibraryFromAClone runs what README tells an outside module to do before a release:
// its `go mod edit -replace` (with the clone's path replaced by this checkout) and the go
// commands after it, in a module of its own outside the workspace, then builds a program that
// takes a lease. The module cache is the only source (GOPROXY=off): the modules the library
// needs are those this checkout already built with.
func TestReadmeLibraryFromAClone(t *testing.T) {
	root := testkit.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeReplaceCommands(t, string(readme), root)
	dir := t.TempDir()
	writeConsumer(t, dir)
	for _, args := range append(commands, []string{"go", "build", "-o", "worker", "."}) {
		cmd := exec.Command(testkit.GoBinary(), args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(goMod), "require github.com/lockwatch/lockwatch ") &&
		!strings.Contains(string(goMod), "\tgithub.com/lockwatch/lockwatch ") {
		t.Errorf("go.mod after README's commands does not require the library:\n%s", goMod)
	}
}

// readmeReplaceCommands are the go commands of README's code block holding the replace line,
// from that line on, each split into its words without a trailing comment; the clone's path is
// root.
func readmeReplaceCommands(t *testing.T, readme, root string) [][]string {
	t.Helper()
	for _, block := range codeBlocks(readme) {
		var commands [][]string
		for _, l := range block {
			line, _, _ := strings.Cut(l.text, "#")
			line = strings.TrimSpace(line)
			if m := replaceLine.FindStringSubmatch(line); m != nil {
				commands = [][]string{strings.Fields(strings.Replace(line, "="+m[1], "="+root, 1))}
				continue
			}
			if commands != nil && strings.HasPrefix(line, "go ") {
				commands = append(commands, strings.Fields(line))
			}
		}
		if commands != nil {
			return commands
		}
	}
	t.Fatal("README.md: no code block with `go mod edit -replace github.com/lockwatch/lockwatch=<clone>`")
	return nil
}

// writeConsumer writes a module outside the workspace whose program takes a lease.
func writeConsumer(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"go.mod": "module example.com/worker\n\ngo 1.26\n",
		"main.go": `package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
)

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	_, err := lease.New(rdb, lease.Options{})
	fmt.Println(err)
}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
