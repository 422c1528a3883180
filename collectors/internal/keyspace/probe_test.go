package keyspace

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestProbeReadsWhatRedisReturns sets notify-keyspace-events on a real server and probes it:
// Redis normalises the value (KEA reads back as AKE, Ex as xE), and Probe must judge the form
// it reads back, not the one an operator typed.
func TestProbeReadsWhatRedisReturns(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		set        string
		sufficient bool
		evictions  bool
		missing    string
	}{
		{set: "", missing: "g$hx"},
		{set: "Ex", missing: "g$h"},
		{set: "Kx", missing: "g$h"},
		{set: "KEx", missing: "g$h"},
		{set: "KEg$hx", sufficient: true},
		{set: "Kg$hxe", sufficient: true, evictions: true},
		{set: "K$ghx", sufficient: true},
		{set: "KEA", sufficient: true, evictions: true},
		{set: "KA", sufficient: true, evictions: true},
		{set: "KEg$lshzxetd", sufficient: true, evictions: true},
		{set: "EA", evictions: true},
		{set: "KEAm", sufficient: true, evictions: true},
		{set: "Kg$h", missing: "x"},
		{set: "Kg$x", missing: "h"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			if err := c.ConfigSet(ctx, Setting, tc.set).Err(); err != nil {
				t.Fatalf("CONFIG SET %s %q: %v", Setting, tc.set, err)
			}
			s, err := Probe(ctx, c)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if s.Sufficient() != tc.sufficient || s.Evictions != tc.evictions || s.Missing != tc.missing {
				t.Errorf("set %q, read back %q: sufficient %v evictions %v missing %q; want %v %v %q",
					tc.set, s.Value, s.Sufficient(), s.Evictions, s.Missing, tc.sufficient, tc.evictions, tc.missing)
			}
			if (s.Shortfall() == "") != tc.sufficient {
				t.Errorf("Shortfall() = %q with sufficient %v", s.Shortfall(), tc.sufficient)
			}
		})
	}
}

// TestProbeRefusedByACL: a user without +config|get learns nothing, and says why.
func TestProbeRefusedByACL(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "noconfig", "on", ">pw", "-@all", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noconfig", Password: "pw"})
	defer c.Close()
	_, err := Probe(ctx, c)
	if !errors.Is(err, ErrConfigRefused) {
		t.Fatalf("Probe as a user without +config|get: %v, want ErrConfigRefused", err)
	}
}
