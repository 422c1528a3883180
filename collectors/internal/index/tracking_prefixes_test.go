package index

import (
	"fmt"
	"testing"
)

func TestTrackingPrefixesMerged(t *testing.T) {
	got, ok := TrackingPrefixes([]string{"jobs:*", "jobs:deploy:*", "{jobs:*", "h:*", "a?b", "jobs"})
	want := []string{"a", "h:", "jobs", "{a", "{h:", "{jobs", "{{jobs:"}
	if !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("prefixes %v %v, want %v", got, ok, want)
	}
	if _, ok := TrackingPrefixes([]string{"jobs:*", "*:lock"}); ok {
		t.Fatal("a pattern without a literal prefix must not be tracked")
	}
}
