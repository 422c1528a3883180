package demo

import "testing"

func TestEscapeGlob(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lockwatch-demo:*", "lockwatch-demo:*"},
		{"{lockwatch-demo:*", "{lockwatch-demo:*"},
		{"a*b?[c]\\:*", `a\*b\?\[c\]\\:*`},
	}
	for _, tt := range tests {
		if got := escapeGlob(tt.in); got != tt.want {
			t.Errorf("escapeGlob(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
