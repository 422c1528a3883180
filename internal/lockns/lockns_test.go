package lockns

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct{ name, pattern, want string }{
		{"jobs", "jobs:*", ""},
		{"jobs", "jobs:[a-z]*", ""},
		{"jobs", `jobs:\*`, ""},
		{"", "jobs:*", `namespace with pattern "jobs:*" has an empty name`},
		{strings.Repeat("n", MaxNameLen+1), "jobs:*", "is longer than 128 bytes"},
		{"a\tb", "jobs:*", "must be printable UTF-8"},
		{"jobs", "", `namespace "jobs": pattern "": empty pattern`},
		{"jobs", "jobs:[a-z", "unterminated [ character class"},
		{"jobs", `jobs:\`, "ends with a lone backslash"},
	} {
		err := Validate(c.name, c.pattern)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Validate(%q, %q) = %v, want nil", c.name, c.pattern, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Validate(%q, %q) = %v, want %q", c.name, c.pattern, err, c.want)
		}
	}
}
