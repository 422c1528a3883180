package deploytest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The docs checked for paths: what a reader follows to find code. CHANGELOG.md is left out on
// purpose: its released sections name files as they were then.
var docsWithPaths = []string{
	"README.md",
	"docs/*.md",
	"alerts/README.md",
	"dashboards/README.md",
	"examples/*/*.md",
}

// codeSpan is a Markdown code span; linkTarget is a relative Markdown link's target (no scheme,
// anchor cut off).
var (
	codeSpan   = regexp.MustCompile("`([^`\n]+)`")
	linkTarget = regexp.MustCompile(`\]\(([^)#:\s]+)(?:#[^)]*)?\)`)
	// anchorLink is a link to a heading: [text](other.md#heading) or [text](#heading).
	anchorLink = regexp.MustCompile(`\]\(([^)#:\s]*)#([^)\s]+)\)`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*$`)
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	// repoPath is a code span that is only a relative path: dir/…/name or a file name with a
	// source, doc or data extension.
	repoPath = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?$`)
	fileName = regexp.MustCompile(`\.(?:go|md|ya?ml|json|sh)$`)
	// moduleTag is a submodule's release tag (`cmd/vX.Y.Z`, `observe/rueidisobserve/v0.1.0`),
	// which looks like a path but names a git tag.
	moduleTag = regexp.MustCompile(`/v(?:X\.Y\.Z|\d+\.\d+\.\d+)$`)
)

// otherProjects are bare file names the docs cite from other projects' trees, by doc.
var otherProjects = map[string]string{
	"v42.go": "docs/dashboards.md", // Grafana's dashboard schema migrations
}

// TestDocPathsExist: every repository path a doc names (a relative link, or a code span such as
// `lease/release.go`, `cmd/lockwatch-pack/internal/pack/`) exists, and every bare file name (`release.go`) is the
// name of some file in the tree; so a file moved or renamed without its docs fails here.
func TestDocPathsExist(t *testing.T) {
	root := testkit.RepoRoot(t)
	names := fileNames(t, root)
	found := 0
	for _, doc := range readDocs(t, root) {
		for _, m := range linkTarget.FindAllStringSubmatch(doc.text, -1) {
			found++
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc.path), m[1])); err != nil {
				t.Errorf("%s: link to %s, which does not exist", doc.rel, m[1])
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(doc.text, -1) {
			span := m[1]
			if !repoPath.MatchString(span) || moduleTag.MatchString(span) {
				continue
			}
			switch {
			case strings.Contains(span, "/") && isTopLevel(root, span):
				found++
				if _, err := os.Stat(filepath.Join(root, span)); err != nil {
					t.Errorf("%s: `%s` does not exist", doc.rel, span)
				}
			case !strings.Contains(span, "/") && fileName.MatchString(span):
				found++
				if !names[span] && otherProjects[span] != doc.rel {
					t.Errorf("%s: no file is named `%s`", doc.rel, span)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no paths found in the docs; the patterns are broken")
	}
}

// TestDocAnchorsExist: every link to a heading of a doc ([…](lease.md#fencing), [](#cost))
// names a heading that exists, by GitHub's anchors, so a renamed section breaks no link silently.
func TestDocAnchorsExist(t *testing.T) {
	root := testkit.RepoRoot(t)
	found := 0
	for _, doc := range readDocs(t, root) {
		for _, m := range anchorLink.FindAllStringSubmatch(doc.text, -1) {
			target := doc.path
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(doc.path), m[1])
			}
			if filepath.Ext(target) != ".md" {
				continue
			}
			found++
			anchors, err := headingAnchors(target)
			if err != nil {
				t.Errorf("%s: link to %s#%s: %v", doc.rel, m[1], m[2], err)
				continue
			}
			if !anchors[m[2]] {
				t.Errorf("%s: link to %s#%s, which names no heading", doc.rel, m[1], m[2])
			}
		}
	}
	if found == 0 {
		t.Fatal("no heading links found in the docs; the pattern is broken")
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings: lower case, spaces as
// hyphens, punctuation other than - and _ dropped, a repeated anchor suffixed -1, -2, …
// Lines inside fenced code blocks are not headings.
func headingAnchors(path string) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		m := heading.FindStringSubmatch(line)
		if inFence || m == nil {
			continue
		}
		slug := strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors, nil
}

// isTopLevel reports whether a slash path starts with one of the repository's own top-level
// entries, which tells `lease/release.go` apart from `text/plain` or `go.opentelemetry.io/otel`.
func isTopLevel(root, span string) bool {
	first, _, _ := strings.Cut(span, "/")
	if first == "." || first == ".." {
		return false
	}
	_, err := os.Stat(filepath.Join(root, first))
	return err == nil
}

// doc is one of docsWithPaths: its path, its path relative to the root with / (for messages
// and otherProjects), and its text.
type doc struct{ path, rel, text string }

func readDocs(t *testing.T, root string) []doc {
	t.Helper()
	var docs []doc
	for _, pattern := range docsWithPaths {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range matches {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, doc{path: path, rel: filepath.ToSlash(rel), text: string(raw)})
		}
	}
	return docs
}

// fileNames is the set of base names of the files in the tree (outside .git).
func fileNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		names[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
