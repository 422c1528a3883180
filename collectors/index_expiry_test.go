package collectors

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// expiringKeys is how many lock keys and fence keys TestIndexExpiredKeysNotCounted lets expire,
// beside unrelatedKeys keys with an hour's TTL: with so many keys that are not due, Redis's
// active expiry finds few of the expired ones per cycle, and reclaims them over minutes.
const (
	expiringKeys  = 1000
	unrelatedKeys = 40000
)

// writeExpiring writes expiringKeys lock keys (jobs:from…) and as many fence keys, all expiring
// after ttl, and returns the latest expiry on the server's clock (Unix ms).
func writeExpiring(t *testing.T, c *redis.Client, from int, ttl time.Duration) int64 {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := from; i < from+expiringKeys; i++ {
		key := fmt.Sprintf("jobs:%d", i)
		pipe.Set(ctx, key, "token", ttl)
		pipe.Set(ctx, lockkeys.Fence(key), i, ttl)
	}
	now := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return now.Val().UnixMilli() + ttl.Milliseconds()
}

// TestIndexExpiredKeysNotCounted: a key past its expiry is gone, whatever Redis has not yet
// reclaimed, for every kind of key the index holds, whether its build read it or a re-read the
// change feed asked for (a backstop walk's reads: TestIndexBackstopReadsFenceExpiry). Fence keys
// were indexed without their expiry: after 1000 of them expired the index still counted 998 to
// 1000, where a walk read 0.
func TestIndexExpiredKeysNotCounted(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// index writes the expiring keys and brings them into s's index; it returns their
		// latest expiry.
		index func(t *testing.T, c *redis.Client) (*Scanner, int64)
	}{
		{"read by the build", func(t *testing.T, c *redis.Client) (*Scanner, int64) {
			last := writeExpiring(t, c, 0, 4*time.Second)
			return expiryScanner(t, c), last
		}},
		{"re-read from the feed", func(t *testing.T, c *redis.Client) (*Scanner, int64) {
			s := expiryScanner(t, c)
			last := writeExpiring(t, c, 0, 2*time.Second)
			s.Scan(ctx) // drains the feed: the keys are re-read
			return s, last
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client(t)
			pipe := c.Pipeline()
			for i := range unrelatedKeys {
				pipe.Set(ctx, fmt.Sprintf("other:%d", i), "x", time.Hour)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			s, last := tc.index(t, c)
			before := s.Scan(ctx).Namespaces
			if got := fenceKeysOf(before, "jobs"); got != expiringKeys {
				t.Fatalf("before the expiry the index holds %d fence keys, want %d: the keys expired before the test could look", got, expiringKeys)
			}
			testkit.AwaitServerTime(t, c, last)
			res := s.Scan(ctx)
			// Redis has reclaimed few of them yet: the index must not count what it holds.
			if size := c.DBSize(ctx).Val(); size < unrelatedKeys+expiringKeys {
				t.Fatalf("DBSIZE %d: Redis reclaimed most expired keys already; the test cannot fail", size)
			}
			for _, ns := range res.Namespaces {
				if ns.Namespace.Name != "jobs" && ns.Namespace.Name != "companions" {
					continue
				}
				if ns.Keys != 0 || ns.FenceKeys != 0 {
					t.Errorf("%s after every key expired: %d keys, %d fence keys; want 0 and 0 (%s)", ns.Namespace.Name, ns.Keys, ns.FenceKeys, modes(res))
				}
			}
			compareNow(t, s, c, "the expiry")
		})
	}
}

// expiryScanner is a Scanner of indexNamespaces but the walked one (a walk's SCAN reclaims the
// expired keys it passes), with no backstop walk, whose SCAN would reclaim them too.
func expiryScanner(t *testing.T, c *redis.Client) *Scanner {
	t.Helper()
	namespaces := slices.DeleteFunc(slices.Clone(indexNamespaces), func(ns Namespace) bool { return walk.LiteralPrefix(ns.Pattern) == "" })
	s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeAuto, BackstopKeysPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	return s
}

func fenceKeysOf(namespaces []NamespaceResult, name string) int64 {
	for _, ns := range namespaces {
		if ns.Namespace.Name == name {
			return ns.FenceKeys
		}
	}
	return -1
}
