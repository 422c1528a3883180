package main

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// TestVariantsCountCycles checks what the benchmark's accounting relies on, for every variant
// against a real redis-server: a cycle on a free key takes the lock, holds it under the
// library's key and frees it; a cycle on a key another owner holds reports not acquired, with
// no error, and leaves the other owner's lock in place.
func TestVariantsCountCycles(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	variants, err := buildVariants(srv.Addr(), 2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, v := range variants {
			v.close()
		}
	}()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer admin.Close()
	ctx := context.Background()

	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			free := "test:free:" + v.name
			acquired, err := v.worker(free)(ctx)
			if err != nil || !acquired {
				t.Fatalf("free key: acquired=%v err=%v, want acquired", acquired, err)
			}
			if n := admin.Exists(ctx, v.redisKey(free)).Val(); n != 0 {
				t.Fatalf("free key: %s still exists after the cycle", v.redisKey(free))
			}

			held := "test:held:" + v.name
			if err := admin.Set(ctx, v.redisKey(held), "other-owner", lockTTL).Err(); err != nil {
				t.Fatal(err)
			}
			acquired, err = v.worker(held)(ctx)
			if err != nil || acquired {
				t.Fatalf("held key: acquired=%v err=%v, want a busy attempt without error", acquired, err)
			}
			if got := admin.Get(ctx, v.redisKey(held)).Val(); got != "other-owner" {
				t.Fatalf("held key: value %q after the attempt, want the other owner's", got)
			}
		})
	}
}

// TestVariantsNoNetwork checks that the network-free variants complete cycles without error
// and without touching Redis.
func TestVariantsNoNetwork(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	local, err := clientOnlyVariants(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer admin.Close()
	for _, v := range local {
		acquired, err := v.worker("local")(context.Background())
		if err != nil || !acquired {
			t.Errorf("%s: acquired=%v err=%v, want acquired", v.name, acquired, err)
		}
		v.close()
	}
	if n := admin.DBSize(context.Background()).Val(); n != 0 {
		t.Errorf("DBSIZE %d after network-free cycles, want 0", n)
	}
}

func TestParseScrape(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkScrape/keys=10000-2         	       3	  31086212 ns/op	         1.020 cmds/key	         3.300 ceiling-ns/PTTL	      3104 ns/key	         4.10 peak-heap-MiB
BenchmarkScrape/keys=1000000-2       	       3	3108621200 ns/op	         1.001 cmds/key	      3109 ns/key
PASS
`)
	rows, err := parseScrape(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].keys != 10_000 || rows[1].keys != 1_000_000 {
		t.Fatalf("rows %+v", rows)
	}
	if got := rows[0].metrics["peak-heap-MiB"]; got != 4.10 {
		t.Errorf("peak-heap-MiB %v, want 4.10", got)
	}
	if got := rows[1].metrics["ns/key"]; got != 3109 {
		t.Errorf("ns/key %v, want 3109", got)
	}
	if _, err := parseScrape([]byte("FAIL\n")); err == nil {
		t.Error("no result lines: want an error")
	}
}

// The shapes beyond the first two run each library as its users run it and lease's
// single-command baseline: no metrics-off row and no AutoPipeline row, lease's included.
func TestMainVariants(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	variants, err := buildVariants(srv.Addr(), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeVariants(variants)
	var main []string
	for _, v := range variants {
		if mainVariant(v.name) {
			main = append(main, v.name)
		}
	}
	want := []string{leaseOn, "bsm/redislock", "redsync", leaseOn + singleSuffix, "rueidislock"}
	if !slices.Equal(main, want) {
		t.Errorf("main variants %q, want %q", main, want)
	}
}
