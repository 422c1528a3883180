package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// aclOutcome is what an ACL user's exporter makes of a namespace once keys changed under it.
type aclOutcome string

const (
	// aclIndexed: served by the index, scrape_success 1, every count equal to a fresh walk's.
	aclIndexed aclOutcome = "indexed"
	// aclWalked: the index refused (a grant it needs is missing), the walk serves the
	// namespace with reason tracking_refused, scrape_success 1, every count exact.
	aclWalked aclOutcome = "walked"
	// aclFailed: the namespace reports scrape_success 0 (or the scrape lock_exporter_up 0).
	aclFailed aclOutcome = "failed"
)

// aclPassword is the exporter user's password in these tests.
const aclPassword = "acl-test-password"

// aclNamespaces reads hold ages too, so that the re-reads send the optional holder GET.
var aclNamespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*", ExpectedMaxHold: time.Minute}}

// aclSeed writes n lock keys from first on, each with a fence key and a holder record.
func aclSeed(t *testing.T, c *redis.Client, first, n int) {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := first; i < first+n; i++ {
		key := fmt.Sprintf("jobs:%d", i)
		pipe.Set(ctx, key, "token", time.Minute)
		pipe.Set(ctx, lockkeys.Fence(key), i, time.Hour)
		pipe.Set(ctx, lockkeys.Holder(key), "worker-1", time.Minute)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// aclScanner starts a Scanner as the exporter's user and waits until its index was built or
// refused.
func aclScanner(t *testing.T, srv *redistest.Server, log *lineLog) *Scanner {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: aclPassword, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	s, err := NewScanner(c, Options{Namespaces: aclNamespaces, Mode: ModeAuto, Logger: slog.New(log), recordHoldAgesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if built, refused := buildSettled(nodeOf(s)); built || refused != nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatal("the index was neither built nor refused in 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// outcomeOf classifies a scrape of the one namespace, and reports counts that differ from the
// truth (a walk as the administrator) while the scrape claims success.
func outcomeOf(res, truth *Result) (aclOutcome, string) {
	ns, w := res.Namespaces[0], truth.Namespaces[0]
	if !res.Up || ns.Err != nil {
		return aclFailed, ""
	}
	got := aclIndexed
	if ns.Mode != modeIndex {
		got = aclWalked
		if ns.ModeReason != reasonTrackingRefused {
			return got, "walked with reason " + ns.ModeReason + ", want " + reasonTrackingRefused
		}
	}
	if ns.Keys != w.Keys || ns.KeysWithoutTTL != w.KeysWithoutTTL || ns.FenceKeys != w.FenceKeys {
		return got, fmt.Sprintf("keys/noTTL/fence %d/%d/%d with scrape_success 1, a fresh walk %d/%d/%d",
			ns.Keys, ns.KeysWithoutTTL, ns.FenceKeys, w.Keys, w.KeysWithoutTTL, w.FenceKeys)
	}
	return got, ""
}

// aclChurn changes the namespace under a running exporter: 40 new locks with their fence and
// holder keys, one lock deleted, one made permanent.
func aclChurn(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	aclSeed(t, c, 10, 40)
	if err := c.Del(ctx, "jobs:0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Persist(ctx, "jobs:1").Err(); err != nil {
		t.Fatal(err)
	}
}

// withoutRules returns rules less every rule in drop (a selector is dropped whole by listing
// its words).
func withoutRules(rules []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(rules), func(r string) bool { return slices.Contains(drop, r) })
}

// narrowed returns rules with the key pattern %R~* replaced by patterns.
func narrowed(rules []string, patterns ...string) []string {
	i := slices.Index(rules, "%R~*")
	return slices.Concat(rules[:i], patterns, rules[i+1:])
}

// TestIndexACLGrants runs the index as the exporter's user with the documented ACL, without
// each documented grant in turn, and with the key pattern narrowed: after keys changed under
// it, every scrape must be exact (index or walk) or a truthful failure, and which of the
// three it is says what the index sends. A re-read refused by the ACL was forgotten after one
// drain: lock_keys 9 with 49 live and scrape_success 1 without +type, and lock_fence_keys 10
// with 50 live under %R~jobs:*.
func TestIndexACLGrants(t *testing.T) {
	documented := testkit.DocumentedACL(t, aclPassword)
	selector := []string{"(+get", "%R~*:fence", "%R~*:holder)"}
	cases := []struct {
		name  string
		rules []string
		want  aclOutcome
		skip  string
	}{
		{"documented", documented, aclIndexed, ""},
		// The feed's round trip is a TIME: PING is for people checking by hand.
		{"without +ping", withoutRules(documented, "+ping"), aclIndexed, ""},
		{"without +scan", withoutRules(documented, "+scan"), aclFailed, ""},
		// On Redis 7 the index reads PEXPIRETIME alone; PTTL is the walk's (and the index's
		// before Redis 7): a scrape the walk serves fails, the index serves without it.
		{"without +pttl", withoutRules(documented, "+pttl"), aclIndexed, ""},
		{"without +object|idletime", withoutRules(documented, "+object|idletime"), aclFailed, ""},
		// The walk reads no TYPE (SCAN … TYPE string); the index's re-reads must.
		{"without +type", withoutRules(documented, "+type"), aclWalked, ""},
		{"without +dbsize", withoutRules(documented, "+dbsize"), aclWalked, ""},
		// A single server: no slot map, no redirects.
		{"without +cluster|slots", withoutRules(documented, "+cluster|slots"), aclIndexed, ""},
		{"without +asking", withoutRules(documented, "+asking"), aclIndexed, ""},
		{"without +client|tracking", withoutRules(documented, "+client|tracking"), aclWalked, ""},
		{"without +info", withoutRules(documented, "+info"), aclWalked, ""},
		{"without +time", withoutRules(documented, "+time"), aclWalked, ""},
		{"without +pexpiretime", withoutRules(documented, "+pexpiretime"), aclWalked, ""},
		{"without %R~*", withoutRules(documented, "%R~*"), aclFailed, ""},
		// Holders and hold ages are optional reads: without them the counts stand.
		{"without the GET selector", withoutRules(documented, selector...), aclIndexed, ""},
		// The docs' advice for a Redis that holds other data: the locks and their companions.
		{"narrowed to jobs:* and {jobs:*", narrowed(documented, "%R~jobs:*", "%R~{jobs:*"), aclIndexed, ""},
		// Without the companions the fence keys are unreadable: the build's read of their
		// expiry is refused, and the walk (which counts them by name) serves.
		{"narrowed to jobs:* alone", narrowed(documented, "%R~jobs:*"), aclWalked, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			srv := redistest.Start(t)
			admin := srv.Client(t)
			aclSeed(t, admin, 0, 10)
			testkit.SetACL(t, srv, tc.rules)
			s := aclScanner(t, srv, &lineLog{})
			s.Scan(context.Background())
			aclChurn(t, admin)
			// Two scrapes: the first re-reads the changed keys; the second is the one that
			// forgot them when they could not be read.
			for i := 1; i <= 3; i++ {
				res := s.Scan(context.Background())
				got, wrong := outcomeOf(res, freshWalk(t, admin, aclNamespaces))
				if wrong != "" {
					t.Fatalf("scrape %d: %s: %s (%s)", i, got, wrong, modes(res))
				}
				if i > 1 && got != tc.want {
					t.Fatalf("scrape %d: %s, want %s (%s, up %v %v, namespace error %v)", i, got, tc.want, modes(res), res.Up, res.Err, res.Namespaces[0].Err)
				}
			}
		})
	}
}

// TestIndexUnreadableKeyIsRetried: a changed key that the ACL refuses to read (a fence key
// outside a key pattern narrowed to the locks) fails its namespace, with the reason logged,
// at every scrape until it can be read; once the grant is given, the next scrape re-reads it
// and is exact. Before, it was dropped after one drain and never read again.
func TestIndexUnreadableKeyIsRetried(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	pipe := admin.Pipeline()
	for i := range 10 {
		pipe.Set(ctx, fmt.Sprintf("jobs:%d", i), "token", time.Minute)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	documented := testkit.DocumentedACL(t, aclPassword)
	testkit.SetACL(t, srv, narrowed(documented, "%R~jobs:*"))
	log := &lineLog{}
	s := aclScanner(t, srv, log)
	waitCurrent(t, s)
	for i := range 25 {
		admin.Set(ctx, lockkeys.Fence(fmt.Sprintf("jobs:%d", i)), i, time.Hour)
	}
	const failed = "lock key scan failed for one namespace"
	for i := 1; i <= 3; i++ {
		res := s.Scan(ctx)
		ns := res.Namespaces[0]
		if !res.Up || ns.Err == nil || ns.Mode != modeIndex {
			t.Fatalf("scrape %d with 25 unreadable fence keys: up %v, mode %s, fence keys %d, namespace error %v; want the indexed namespace failed",
				i, res.Up, ns.Mode, ns.FenceKeys, ns.Err)
		}
		if !strings.Contains(ns.Err.Error(), "NOPERM") {
			t.Errorf("scrape %d: namespace error %q does not name the refusal", i, ns.Err)
		}
		if got := log.count(failed); got != i {
			t.Errorf("after %d failed scrapes: %d %q lines, want %d", i, got, failed, i)
		}
	}
	testkit.SetACL(t, srv, narrowed(documented, "%R~jobs:*", "%R~{jobs:*"))
	res := s.Scan(ctx)
	got, wrong := outcomeOf(res, freshWalk(t, admin, aclNamespaces))
	if got != aclIndexed || wrong != "" {
		t.Fatalf("after the grant: %s %s (%s, namespace error %v), want indexed and exact", got, wrong, modes(res), res.Namespaces[0].Err)
	}
}
