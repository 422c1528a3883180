package glob

import "testing"

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, key string
		want         bool
	}{
		{"scheduler:job:*", "scheduler:job:42", true},
		{"scheduler:job:*", "scheduler:job:", true},
		{"scheduler:job:*", "scheduler:jobs", false},
		{"*", "", false}, // the server's matcher never matches the empty key
		{"", "", true},
		{"*", "a", true},
		{"a**", "a", true},
		{"*a*", "a", true},
		{"*a*b", "xaxb", true},
		{"*a*b", "xaxbx", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true}, // reversed range
		{"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hallo", false},
		{`[\]]`, "]", true},
		{`[\-a]`, "-", true},
		{"[]a", "a", false}, // `[]` is an empty set: it matches nothing
		{"[abc", "b", true}, // unterminated set: the rest of the pattern are its members
		{"[abc", "bc", false},
		{"[^", "x", true}, // unterminated negated empty set: any byte
		{"[", "x", false},
		{`a\`, `a\`, true}, // trailing lone backslash is literal
		{"w:deploy:*", "w:deploy:fence", true},
		{"x[a-]", "x-", false}, // "a-]" is the range ]..a, and the set is never closed
		{"x[a-]", "x^", true},
		{"[\x9c-0]", "1", false}, // signed bytes: 0x9c sorts below 0
		{"[\x9c-0]", "\xa0", true},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.key); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.key, got, tt.want)
		}
	}
}
