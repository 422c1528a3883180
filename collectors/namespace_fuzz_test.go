package collectors

import (
	"strings"
	"testing"
	"time"
)

// quoteGlob escapes every glob metacharacter of a literal key, as an operator does to watch one
// exact key.
func quoteGlob(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if strings.IndexByte(`*?[]\`, key[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(key[i])
	}
	return b.String()
}

// FuzzNamespace feeds any name, pattern and expectations to Namespace.Validate: it never panics,
// its error is one line, an accepted namespace keeps the label rules (non-empty printable UTF-8
// of at most 128 bytes), an accepted pattern stays accepted with a prefix or a trailing '*', and
// a literal key escaped with backslashes is always an accepted pattern.
func FuzzNamespace(f *testing.F) {
	f.Add("scheduler", "cordum:scheduler:job:*", int64(60*time.Second), int64(20*time.Second))
	f.Add("workflow", "cordum:wf:run:lock:*", int64(30*time.Second), int64(10*time.Second))
	f.Add("class", "jobs:[a-z]*", int64(0), int64(0))
	f.Add("negated", `jobs:[^\]]?`, int64(0), int64(0))
	f.Add("open class", "jobs:[abc", int64(0), int64(0))
	f.Add("lone backslash", `jobs:\`, int64(0), int64(0))
	f.Add("", "*", int64(0), int64(0))
	f.Add("bad\xffname", "*", int64(0), int64(0))
	f.Add("renew too slow", "*", int64(time.Second), int64(2*time.Second))
	f.Fuzz(func(t *testing.T, name, pattern string, ttl, renew int64) {
		n := Namespace{Name: name, Pattern: pattern, ExpectedTTL: time.Duration(ttl), ExpectedRenewInterval: time.Duration(renew)}
		err := n.Validate()
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("Validate error spans lines: %q", err)
			}
		} else if name == "" || len(name) > 128 || !printable(name) {
			t.Fatalf("accepted namespace name %q", name)
		}
		if err == nil {
			for _, p := range []string{"prefix:" + pattern, pattern + "*"} {
				if err := (Namespace{Name: "n", Pattern: p}).Validate(); err != nil {
					t.Fatalf("pattern %q is accepted but %q is not: %v", pattern, p, err)
				}
			}
		}
		if pattern != "" {
			if err := (Namespace{Name: "n", Pattern: quoteGlob(pattern)}).Validate(); err != nil {
				t.Fatalf("escaped literal key %q rejected: %v", quoteGlob(pattern), err)
			}
		}
	})
}
