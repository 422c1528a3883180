// Package lockns is the one definition of what makes a lock namespace declaration valid: its
// name (the lock_namespace label value) and its Redis glob pattern. The exporter and the observe
// hook both declare namespaces, and a declaration one accepts the other must accept too, with
// the same message for the same mistake.
package lockns

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen bounds a namespace name: it becomes a label value on every series.
const MaxNameLen = 128

// Validate reports the first problem with a namespace's name or pattern, as one line that names
// the namespace.
func Validate(name, pattern string) error {
	switch {
	case name == "":
		return fmt.Errorf("namespace with pattern %q has an empty name", pattern)
	case len(name) > MaxNameLen:
		return fmt.Errorf("namespace name %q is longer than %d bytes", name, MaxNameLen)
	case !Printable(name):
		return fmt.Errorf("namespace name %q must be printable UTF-8", name)
	}
	if err := ValidatePattern(pattern); err != nil {
		return fmt.Errorf("namespace %q: pattern %q: %w", name, pattern, err)
	}
	return nil
}

// Printable reports whether s is valid UTF-8 made of printable characters only.
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ValidatePattern rejects globs Redis would accept but that cannot mean what the user wants: an
// unterminated character class or a dangling escape silently match something else.
func ValidatePattern(p string) error {
	if p == "" {
		return errors.New("empty pattern")
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i == len(p)-1 {
				return errors.New("ends with a lone backslash")
			}
			i++
		case '[':
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			closed := false
			for ; j < len(p); j++ {
				if p[j] == '\\' {
					j++
					continue
				}
				if p[j] == ']' {
					closed = true
					break
				}
			}
			if !closed {
				return errors.New("unterminated [ character class")
			}
			i = j
		}
	}
	return nil
}
