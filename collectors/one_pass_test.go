package collectors

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// scanArgs records the arguments of every SCAN and counts TYPE commands.
type scanArgs struct {
	redishook.PassThrough
	mu    sync.Mutex
	scans [][]any
	types int
}

func (h *scanArgs) record(cmds ...redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		switch c.Name() {
		case "scan":
			h.scans = append(h.scans, c.Args())
		case "type":
			h.types++
		}
	}
}

// scanArg returns the value after name (MATCH, TYPE) in the first SCAN, or "".
func (h *scanArgs) scanArg(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.scans) == 0 {
		return ""
	}
	args := h.scans[0]
	for i := 0; i+1 < len(args); i++ {
		if s, ok := args[i].(string); ok && strings.EqualFold(s, name) {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}

func (h *scanArgs) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record(cmd)
		return next(ctx, cmd)
	}
}
func (h *scanArgs) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds...)
		return next(ctx, cmds)
	}
}

// scanCallsOnServer is the SCAN count of INFO commandstats: what Redis itself executed.
func scanCallsOnServer(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_scan:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// seedMixed writes perPrefix string keys under each prefix, with TTLs, plus as many unrelated
// keys of several types.
func seedMixed(t *testing.T, c *redis.Client, prefixes []string, perPrefix int) {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	for _, p := range prefixes {
		for i := range perPrefix {
			pipe.Set(ctx, fmt.Sprintf("%s:%d", p, i), "token", time.Hour)
		}
	}
	for i := range len(prefixes) * perPrefix {
		switch i % 3 {
		case 0:
			pipe.Set(ctx, fmt.Sprintf("cache:%d", i), "v", 0)
		case 1:
			pipe.HSet(ctx, fmt.Sprintf("user:%d", i), "f", "v")
		default:
			pipe.RPush(ctx, fmt.Sprintf("queue:%d", i), "v")
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRedisCostIndependentOfNamespaces scans one keyspace with 1 and with 8 namespaces and
// compares the SCAN calls Redis executed (INFO commandstats): one walk serves every namespace.
// The old engine ran one SCAN walk per namespace, eight times the calls.
func TestRedisCostIndependentOfNamespaces(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	prefixes := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	seedMixed(t, c, prefixes, 1000)

	calls := map[int]int{}
	for _, n := range []int{1, 8} {
		opts := Options{BatchSize: 500}
		for _, p := range prefixes[:n] {
			opts.Namespaces = append(opts.Namespaces, Namespace{Name: p, Pattern: p + ":*"})
		}
		s := newTestScanner(t, c, opts)
		if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		res := scanWithin(t, s, 30*time.Second)
		calls[n] = scanCallsOnServer(t, c)
		if !res.Up {
			t.Fatalf("%d namespaces: %v", n, res.Err)
		}
		for _, ns := range res.Namespaces {
			if !ns.Complete || ns.Keys != 1000 {
				t.Errorf("%d namespaces: %s complete=%v keys=%d, want complete with 1000", n, ns.Namespace.Name, ns.Complete, ns.Keys)
			}
		}
		if int64(calls[n]) != res.ScanCalls {
			t.Errorf("%d namespaces: Redis counted %d SCANs, the scan reports %d", n, calls[n], res.ScanCalls)
		}
	}
	// SCAN COUNT walks buckets, so a MATCH (one namespace pushes "a*") does not change the
	// number of calls; the 5% allow for the hash table's state between the two walks.
	if calls[1] == 0 || float64(calls[8]) > 1.05*float64(calls[1]) || float64(calls[8]) < 0.95*float64(calls[1]) {
		t.Errorf("SCAN calls: %d for 1 namespace, %d for 8; want equal within 5%%", calls[1], calls[8])
	}
}

// TestTypesAndPushdown checks which value types count: strings by default, hashes only where a
// namespace declares them, lists, sets, sorted sets and streams never. With only string
// namespaces the server filters (SCAN ... TYPE string, no TYPE per key); a hash namespace makes
// the exporter ask TYPE per matching key.
func TestTypesAndPushdown(t *testing.T) {
	srv := redistest.Start(t)
	admin := client(t, srv.Addr)
	ctx := context.Background()
	pipe := admin.Pipeline()
	for _, p := range []string{"app:str", "app:red"} {
		pipe.Set(ctx, p+":s", "token", time.Minute)
		pipe.HSet(ctx, p+":h", "owner", "1")
		pipe.RPush(ctx, p+":l", "x")
		pipe.SAdd(ctx, p+":set", "x")
		pipe.ZAdd(ctx, p+":z", redis.Z{Score: 1, Member: "x"})
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: p + ":x", Values: []any{"k", "v"}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		ns        []Namespace
		want      map[string]int64
		wantTyped bool // SCAN ... TYPE string, no TYPE per key
	}{
		{"strings only: pushed down", []Namespace{{Name: "str", Pattern: "app:str:*"}, {Name: "red", Pattern: "app:red:*"}},
			map[string]int64{"str": 1, "red": 1}, true},
		{"hash declared: TYPE per key", []Namespace{{Name: "str", Pattern: "app:str:*"}, {Name: "red", Pattern: "app:red:*", Types: []string{TypeHash}}},
			map[string]int64{"str": 1, "red": 1}, false},
		{"both declared", []Namespace{{Name: "red", Pattern: "app:red:*", Types: []string{TypeString, TypeHash}}},
			map[string]int64{"red": 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client(t, srv.Addr)
			hook := &scanArgs{}
			c.AddHook(hook)
			res := scanWithin(t, newTestScanner(t, c, Options{Namespaces: tt.ns}), 5*time.Second)
			if !res.Up {
				t.Fatal(res.Err)
			}
			for _, ns := range res.Namespaces {
				if ns.Keys != tt.want[ns.Namespace.Name] || ns.KeysWithoutTTL != 0 && ns.Namespace.Name == "str" {
					t.Errorf("%s: %d keys (%d without TTL), want %d", ns.Namespace.Name, ns.Keys, ns.KeysWithoutTTL, tt.want[ns.Namespace.Name])
				}
			}
			typed := strings.EqualFold(hook.scanArg("type"), TypeString)
			if typed != tt.wantTyped || (tt.wantTyped && hook.types != 0) || (!tt.wantTyped && hook.types == 0) {
				t.Errorf("SCAN TYPE arg %q, %d TYPE commands; want pushdown %v", hook.scanArg("type"), hook.types, tt.wantTyped)
			}
			// The shared literal prefix "app:" or its companions' "{app:", byte by byte; never a
			// leading '*', which makes the server glob every byte of every key.
			wantMatch := "[a{][pa]p[:p]*"
			if len(tt.ns) == 1 {
				wantMatch = "[a{][pa]p[:p][r:][er][de][:d]*"
			}
			if got := hook.scanArg("match"); got != wantMatch {
				t.Errorf("SCAN MATCH %q, want %q", got, wantMatch)
			}
		})
	}
}

// serverError stands for an error reply from Redis (go-redis' redis.Error).
type serverError string

func (e serverError) Error() string { return string(e) }
func (serverError) RedisError()     {}

// refuseScanType answers SCAN ... TYPE with the error a Redis older than 6.0 gives.
type refuseScanType struct {
	redishook.PassThrough
	mu      sync.Mutex
	refused int
}

func (h *refuseScanType) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" {
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && strings.EqualFold(s, "type") {
					h.mu.Lock()
					h.refused++
					h.mu.Unlock()
					err := serverError("ERR syntax error")
					cmd.SetErr(err)
					return err
				}
			}
		}
		return next(ctx, cmd)
	}
}

// TestScanTypeFallback runs against a server that refuses SCAN ... TYPE: the first refusal
// switches the node to TYPE per key for good, and the counts stay right.
func TestScanTypeFallback(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ctx := context.Background()
	if err := c.Set(ctx, "old:1", "token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.RPush(ctx, "old:2", "x").Err(); err != nil {
		t.Fatal(err)
	}
	refuse := &refuseScanType{}
	c.AddHook(refuse)
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "old", Pattern: "old:*"}}})
	for range 2 {
		res := scanWithin(t, s, 5*time.Second)
		if ns := res.Namespaces[0]; !res.Up || !ns.Complete || ns.Keys != 1 {
			t.Fatalf("up=%v complete=%v keys=%d err=%v, want up and 1 string key", res.Up, ns.Complete, ns.Keys, res.Err)
		}
	}
	if refuse.refused != 1 {
		t.Errorf("SCAN ... TYPE tried %d times over two scrapes, want once", refuse.refused)
	}
}

// TestFenceKeysByShape checks that only the lease library's companion shapes are skipped, that
// fence counters are counted as lock_fence_keys and holder keys not at all; a lock named
// "w:deploy:fence" or "w:deploy:holder" is a lock. A fence key counts under the namespace of its
// lock even when the braces lease adds ("{w:deploy:build}:fence") keep the pattern "w:deploy:*"
// from matching the fence key itself.
func TestFenceKeysByShape(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ctx := context.Background()
	for _, k := range []string{"w:deploy:fence", "w:deploy:build", "w:deploy:holder"} {
		if err := c.Set(ctx, k, "token", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"{w:deploy:build}:fence", "{w:deploy:x}:writefence"} {
		if err := c.Set(ctx, k, "7", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A hash-tagged lock and its holder key, as lease writes them: {w:deploy}:42:holder matches
	// the tagged pattern but is not a lock.
	if err := c.Set(ctx, "{w:deploy}:42", "token", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, lockkeys.Holder("{w:deploy}:42"), "worker-1 pid 7", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{
		{Name: "w", Pattern: "w:deploy:*"}, {Name: "tagged", Pattern: "{w:deploy*"},
	}})
	got := gather(t, s.Collector(context.Background()))
	for _, tt := range []struct {
		metric, ns string
		want       float64
	}{
		{"lock_keys", "w", 3}, {"lock_fence_keys", "w", 2}, {"lock_keys_without_ttl", "w", 0},
		{"lock_keys", "tagged", 1}, {"lock_fence_keys", "tagged", 2},
	} {
		if v := only(t, got, tt.metric, tt.ns); v != tt.want {
			t.Errorf("%s{%s} = %v, want %v", tt.metric, tt.ns, v, tt.want)
		}
	}
}
