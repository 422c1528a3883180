package demo

import (
	"context"
	"fmt"
	"strings"
)

// removeKeys deletes the demo's lock keys and the library's companion keys ({lock}:fence, the
// fenced data's write-fence keys), and nothing else.
func (w *Workload) removeKeys(ctx context.Context) error {
	for _, pattern := range []string{w.opts.Prefix + "*", "{" + w.opts.Prefix + "*"} {
		iter := w.admin.Scan(ctx, 0, escapeGlob(pattern), 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("demo: remove demo keys: %w", err)
		}
		if len(keys) > 0 {
			if err := w.admin.Unlink(ctx, keys...).Err(); err != nil {
				return fmt.Errorf("demo: remove demo keys: %w", err)
			}
		}
	}
	return nil
}

// escapeGlob escapes glob characters in p except its final '*'.
func escapeGlob(p string) string {
	body := strings.TrimSuffix(p, "*")
	var b strings.Builder
	for _, r := range body {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String() + "*"
}
