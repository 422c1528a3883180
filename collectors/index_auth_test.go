package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexRetriesAfterAuthFailure: a server that refuses the exporter's credentials (or is
// still loading its dataset) has not refused client tracking. The index must retry once the
// credentials work, not fall back to walking the keyspace on every scrape until a restart.
func TestIndexRetriesAfterAuthFailure(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		password string // the exporter's
		accept   string // the server's requirepass once fixed
	}{
		{"NOAUTH: no password given", "", ""},
		{"WRONGPASS: a password rotated late", "next", "next"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithArgs("--requirepass", "right"))
			admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "right", PoolSize: 1})
			defer admin.Close()
			for i := range 5 {
				admin.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Minute)
			}
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: tc.password})
			defer c.Close()
			s, err := NewScanner(c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}, Mode: ModeAuto})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res := s.Scan(ctx); res.Up {
				t.Fatal("scrape with refused credentials reported up")
			}
			if err := admin.ConfigSet(ctx, "requirepass", tc.accept).Err(); err != nil {
				t.Fatal(err)
			}
			res := waitCurrent(t, s)
			if ns := res.Namespaces[0]; ns.Keys != 5 || ns.Mode != modeIndex {
				t.Fatalf("after the credentials work: %d keys, mode %s/%s", ns.Keys, ns.Mode, ns.ModeReason)
			}
		})
	}
}
