package main

import (
	"slices"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestDocumentedACLMatchesDocs: the index comparison runs the index under the rules users copy
// from docs/exporter.md, less the password and the `on`.
func TestDocumentedACLMatchesDocs(t *testing.T) {
	documented := slices.DeleteFunc(testkit.DocumentedACL(t, "x"), func(r string) bool { return r == "on" || r == ">x" })
	if !slices.Equal(documentedACL, documented) {
		t.Errorf("documentedACL = %q\ndocs/exporter.md has %q", documentedACL, documented)
	}
}
