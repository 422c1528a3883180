package collectors

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/companions"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/lease"
)

// TestHolderInfo checks lock_key_holder_info on a real Redis: a lease namespace with
// RecordHolder names its holder, a plain SET NX lock has none, a hostile holder value is escaped
// and capped, a key cut for its label and a key outside the top-K get no series, and no lock's
// token appears in any label.
func TestHolderInfo(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ctx := context.Background()
	seed := newSeeder(t, c)

	long := "jobs:" + strings.Repeat("k", 2*walk.MaxKeyLabelLen)
	hostile := "evil\n\"holder\" " + strings.Repeat("a", 2*companions.MaxValueBytes)
	seed.key(t, "jobs:hostile", time.Minute, 300)
	seed.key(t, long, time.Minute, 200)
	seed.key(t, "jobs:plain", time.Minute, 100) // a SET NX lock of another library: no holder key
	for key, holder := range map[string]string{"jobs:hostile": hostile, long: "long-key-holder"} {
		if err := c.Set(ctx, lockkeys.Holder(key), holder, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}

	lc, err := lease.New(c, lease.Options{Holder: "scheduler-7 pid 4242"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	ns, err := lc.Declare("jobs", lease.Policy{TTL: time.Minute, DisableRenewal: true, RecordHolder: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ns.Acquire(ctx, "jobs:leased")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	// Created after jobs:leased, so never staler than it (and later by name on a tie): fifth of
	// five, outside a top-4, although it has a holder key.
	seed.key(t, "jobs:zz-outside", time.Minute, 0)
	if err := c.Set(ctx, lockkeys.Holder("jobs:zz-outside"), "not-listed", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}

	// "*jobs:*" also matches the holder keys ({jobs:leased}:holder): they must not count as locks.
	s := newTestScanner(t, c, Options{TopK: 4, Namespaces: []Namespace{{Name: "jobs", Pattern: "*jobs:*"}}})
	got := gather(t, s.Collector(ctx))

	if v := only(t, got, "lock_keys", "jobs"); v != 5 {
		t.Errorf("lock_keys = %v, want 5 (holder keys are not locks)", v)
	}
	if n := len(got["lock_key_idle_seconds"]); n != 4 {
		t.Fatalf("%d lock_key_idle_seconds series, want 4", n)
	}
	want := map[string]string{"jobs:leased": "scheduler-7 pid 4242", "jobs:hostile": holderLabel(hostile[:companions.MaxValueBytes])}
	holders := map[string]string{}
	for _, s := range got["lock_key_holder_info"] {
		if s.value != 1 || s.labels[nsLabel] != "jobs" {
			t.Errorf("lock_key_holder_info%v = %v, want 1 in namespace jobs", s.labels, s.value)
		}
		holders[s.labels["key"]] = s.labels["holder"]
	}
	if len(holders) != len(want) {
		t.Errorf("lock_key_holder_info for keys %v, want exactly %v", holders, want)
	}
	for key, holder := range want {
		if holders[key] != holder {
			t.Errorf("holder of %q = %q, want %q", key, holders[key], holder)
		}
	}
	if h := holders["jobs:hostile"]; len(h) > walk.MaxKeyLabelLen || !utf8.ValidString(h) || strings.ContainsAny(h, "\n") {
		t.Errorf("hostile holder label %q: want escaped, valid UTF-8, at most %d bytes", h, walk.MaxKeyLabelLen)
	}
	for _, s := range got["lock_key_idle_seconds"] {
		if _, ok := holders[s.labels["key"]]; !ok && s.labels["key"] != "jobs:plain" && s.labels["key"] != KeyLabel(long) {
			t.Errorf("lock_key_idle_seconds key %q is not one the test expects", s.labels["key"])
		}
	}

	token, err := c.Get(ctx, "jobs:leased").Result()
	if err != nil || token == "" {
		t.Fatalf("read the lease token for the audit: %q, %v", token, err)
	}
	for name, series := range got {
		for _, s := range series {
			for label, v := range s.labels {
				if strings.Contains(v, token) {
					t.Errorf("%s label %s carries the lock token", name, label)
				}
			}
		}
	}
}
