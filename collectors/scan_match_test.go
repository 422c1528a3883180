package collectors

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// prefixBytes favours the bytes that are special inside a glob set (']', '^', '-') or in a
// companion key ('{', '}'); walk.LiteralPrefix never yields '*', '?', '[' or '\'.
const prefixBytes = "]^-{}ab:\xfe"

// TestLockOrCompanionMatchOnRedis asks a real redis-server for the keys the walk's MATCH returns,
// for generated prefixes: every lock under the prefix and its fence and holder keys (both
// shapes: "{L}:fence", and "L:fence" for a hash-tagged L) come back, a key whose first byte is
// neither '{' nor the prefix's does not, and the server agrees with the glob model the exporter
// classifies with.
func TestLockOrCompanionMatchOnRedis(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(23, 1))
	for range 300 {
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = prefixBytes[r.IntN(len(prefixBytes))]
		}
		prefix := string(b)
		match := walk.LockOrCompanionMatch(prefix)
		if strings.HasPrefix(match, "*") {
			t.Fatalf("prefix %q: MATCH %q starts with '*'", prefix, match)
		}
		var want []string
		for _, lock := range []string{prefix + "x", prefix + "{t}1"} {
			want = append(want, lock)
			if lockkeys.SameSlot(lock) {
				want = append(want, lockkeys.Fence(lock), lockkeys.Holder(lock))
			}
		}
		first := byte('0')
		for first == '{' || first == prefix[0] {
			first++
		}
		decoys := []string{string(first) + prefix + "x", string(first) + "{" + prefix + "x}:fence"}
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		pipe := c.Pipeline()
		for _, k := range append(slices.Clone(want), decoys...) {
			pipe.Set(ctx, k, "v", time.Minute)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		for cursor := uint64(0); ; {
			keys, next, err := c.Scan(ctx, cursor, match, 100).Result()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, keys...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		for _, k := range want {
			if !slices.Contains(got, k) {
				t.Errorf("prefix %q: SCAN MATCH %q did not return %q", prefix, match, k)
			}
		}
		for _, k := range append(want, decoys...) {
			if server, model := slices.Contains(got, k), glob.ScanMatch(match, k); server != model {
				t.Errorf("prefix %q: SCAN MATCH %q returns %q: %v, the glob model says %v", prefix, match, k, server, model)
			}
		}
		for _, k := range decoys {
			if slices.Contains(got, k) {
				t.Errorf("prefix %q: SCAN MATCH %q returned %q, whose first byte fits neither shape", prefix, match, k)
			}
		}
	}
}

// TestWalkCountsCompanionsUnderSpecialPrefix walks a namespace whose literal prefix holds the bytes
// a glob set treats specially: its lock, fence and holder keys are still found and counted.
func TestWalkCountsCompanionsUnderSpecialPrefix(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ctx := context.Background()
	const prefix = "^a-]b:"
	pipe := c.Pipeline()
	for _, k := range []string{prefix + "1", prefix + "2"} {
		pipe.Set(ctx, k, "token", time.Minute)
		pipe.Set(ctx, lockkeys.Fence(k), "7", 0)
		pipe.Set(ctx, lockkeys.Holder(k), "worker-1 pid 7", time.Minute)
	}
	pipe.Set(ctx, "a-]b:3", "token", time.Minute) // the prefix without its first byte
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "odd", Pattern: prefix + "*"}}})
	got := gather(t, s.Collector(ctx))
	if v := only(t, got, "lock_keys", "odd"); v != 2 {
		t.Errorf("lock_keys = %v, want 2 (holder keys are no locks)", v)
	}
	if v := only(t, got, "lock_fence_keys", "odd"); v != 2 {
		t.Errorf("lock_fence_keys = %v, want 2", v)
	}
}

// TestIndexFollowsCompanionsUnderBracedPrefix: a lock under a prefix that starts with '{' but
// without a hash tag of its own ("{jobs:1") has its fence key one brace further out
// ("{{jobs:1}:fence"). The walk's MATCH returns it, and the index's change feed must name it too,
// or the index would miss a fence key written after its build.
func TestIndexFollowsCompanionsUnderBracedPrefix(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	namespaces := []Namespace{{Name: "braced", Pattern: "{jobs*"}}
	s := indexed(t, c, namespaces)
	if err := c.Set(ctx, "{jobs:1", "token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Incr(ctx, lockkeys.Fence("{jobs:1")).Err(); err != nil {
		t.Fatal(err)
	}
	got := waitCurrent(t, s).Namespaces[0]
	want := freshWalk(t, c, namespaces).Namespaces[0]
	if got.Keys != 1 || got.FenceKeys != 1 || want.Keys != 1 || want.FenceKeys != 1 {
		t.Errorf("keys/fence keys: index %d/%d, walk %d/%d, want 1/1", got.Keys, got.FenceKeys, want.Keys, want.FenceKeys)
	}
}
