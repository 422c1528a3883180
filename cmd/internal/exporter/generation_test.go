package exporter

import (
	"fmt"
	"strings"
	"testing"
)

// TestLiveGenerationClosesAfterLastRequest: a replaced generation is closed exactly once, when
// its last request ends or at once when it has none, and never while a request uses it.
func TestLiveGenerationClosesAfterLastRequest(t *testing.T) {
	tests := []struct {
		name string
		ops  string // a: acquire (from the live one), r: release the oldest acquired, s: swap in the next, x: swap in nil
		want string // the generations closed, in order
	}{
		{"idle generation closes at the swap", "s", "0"},
		{"busy generation waits for its request", "as", ""},
		{"last request closes it", "asr", "0"},
		{"two requests, the second closes it", "aasr", ""},
		{"two requests, both released", "aasrr", "0"},
		{"a request holds a later generation until it ends", "sas", "0"},
		{"and closes it when it ends", "sasr", "01"},
		{"shutdown closes the last one", "ssx", "012"},
		{"shutdown waits for a request in flight", "sax", "0"},
		{"shutdown then the request ends", "saxr", "01"},
		{"no generation after shutdown", "xa", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var closed []string
			newGen := func(i int) *generation {
				return &generation{close: func() { closed = append(closed, fmt.Sprint(i)) }}
			}
			live := &liveGeneration{gen: newGen(0)}
			next := 1
			var held []*generation
			for _, op := range tt.ops {
				switch op {
				case 'a':
					if g := live.acquire(); g != nil {
						held = append(held, g)
					}
				case 'r':
					live.release(held[0])
					held = held[1:]
				case 's':
					live.swap(newGen(next))
					next++
				case 'x':
					live.swap(nil)
				}
			}
			if got := strings.Join(closed, ""); got != tt.want {
				t.Errorf("closed %q, want %q", got, tt.want)
			}
		})
	}
}
