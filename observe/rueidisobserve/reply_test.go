package rueidisobserve

import (
	"context"
	"testing"

	"github.com/redis/rueidis"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/observe"
)

// Replies as a real server gives them: an integer, a string that reads as one (as before, an
// integer), a nil, and OK, which is read without an attempt to parse it: an acquire's reply
// costs no allocation.
func TestReplyReadsResultsWithoutAllocating(t *testing.T) {
	srv := redistest.Start(t)
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	ctx := context.Background()
	do := func(args ...string) rueidis.RedisResult {
		return client.Do(ctx, client.B().Arbitrary(args[0]).Args(args[1:]...).Build())
	}
	ok := do("SET", "jobs:1", "42")
	tests := []struct {
		name string
		resp rueidis.RedisResult
		want observe.Reply
	}{
		{"OK", ok, observe.Reply{}},
		{"integer", do("DEL", "jobs:1"), observe.Reply{Int: 1, IsInt: true}},
		{"numeric string", func() rueidis.RedisResult { do("SET", "jobs:2", "-7"); return do("GET", "jobs:2") }(), observe.Reply{Int: -7, IsInt: true}},
		{"nil", do("GET", "jobs:none"), observe.Reply{Nil: true}},
	}
	for _, tc := range tests {
		if got := reply(tc.resp); got != tc.want {
			t.Errorf("%s: reply = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = reply(ok) }); n != 0 {
		t.Errorf("reading OK: %v allocations, want 0", n)
	}
}
