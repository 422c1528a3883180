package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestHoldersAsTheACLUser runs inspect (table and JSON) and the exporter as the user with exactly
// the documented ACL, over a lease namespace that records holders and a plain SET NX lock: the
// lease lock shows its holder, the plain one shows none, the user can GET the holder key but not
// the lock key, and no lock token appears in any output.
func TestHoldersAsTheACLUser(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()

	const holder = "scheduler-7 pid 4242"
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	lc, err := lease.New(rdb, lease.Options{Holder: holder})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	ns, err := lc.Declare("jobs", lease.Policy{TTL: time.Minute, DisableRenewal: true, Fencing: true, RecordHolder: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ns.Acquire(ctx, "jobs:leased")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	if ok, err := admin.SetNX(ctx, "jobs:plain", "plain-token-9c2e71", time.Minute).Result(); err != nil || !ok {
		t.Fatalf("SET NX jobs:plain: %v, %v", ok, err)
	}
	var tokens []string
	for _, k := range []string{"jobs:leased", "jobs:plain"} {
		tok, err := admin.Get(ctx, k).Result()
		if err != nil || tok == "" {
			t.Fatalf("read %s's token for the audit: %q, %v", k, tok, err)
		}
		tokens = append(tokens, tok)
	}

	testkit.SetACL(t, srv, testkit.DocumentedACL(t, aclPassword))
	user := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: aclUser, Password: aclPassword, DisableIdentity: true, MaxRetries: -1})
	defer user.Close()
	if got, err := user.Get(ctx, lockkeys.Holder("jobs:leased")).Result(); err != nil || lockkeys.ParseHolder(got).Description != holder {
		t.Errorf("GET the holder key as %s: %q, %v; want %q", aclUser, got, err, holder)
	}
	for _, k := range []string{"jobs:leased", "jobs:plain"} {
		if err := user.Get(ctx, k).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("GET %s (the token) as %s: %v, want NOPERM", k, aclUser, err)
		}
	}

	args := []string{"inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*"}
	code, table, stderr := runCmd(t, aclVars, args...)
	if code != exitOK || stderr != "" {
		t.Fatalf("inspect: status %d, stderr %q", code, stderr)
	}
	for _, want := range []string{`(?m)^jobs:leased\s+\S+\s+\S+\s+\d+\s+` + holder + `$`, `(?m)^jobs:plain\s+\S+\s+\S+\s+-\s+-$`} {
		if !regexpMatch(want, table) {
			t.Errorf("inspect table:\n%s\nwant a row matching %s", table, want)
		}
	}

	code, out, stderr := runCmd(t, aclVars, append(args, "--output", "json")...)
	if code != exitOK || stderr != "" {
		t.Fatalf("inspect --output json: status %d, stderr %q", code, stderr)
	}
	var rep struct {
		Listed []struct {
			Key    string  `json:"key"`
			Holder *string `json:"holder"`
		} `json:"keys_listed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json output does not parse: %v", err)
	}
	holders := map[string]*string{}
	for _, k := range rep.Listed {
		holders[k.Key] = k.Holder
	}
	if h := holders["jobs:leased"]; len(rep.Listed) != 2 || h == nil || *h != holder || holders["jobs:plain"] != nil {
		t.Errorf("json keys_listed %s: want jobs:leased with holder %q and jobs:plain with null", out, holder)
	}

	s := startServer(t, aclVars, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	status, body := s.get(t, "/metrics", 5*time.Second)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", status)
	}
	wantMetric(t, body, `lock_key_holder_info{holder="`+holder+`",key="jobs:leased",lock_namespace="jobs"}`, 1)
	if strings.Contains(body, `lock_key_holder_info{holder="-"`) || regexpMatch(`lock_key_holder_info\{[^}]*key="jobs:plain"`, body) {
		t.Errorf("/metrics has a holder series for the plain SET NX lock")
	}

	for _, tok := range tokens {
		for what, text := range map[string]string{"inspect table": table, "inspect json": out, "/metrics": body} {
			if strings.Contains(text, tok) {
				t.Errorf("%s contains a lock token", what)
			}
		}
	}
}
