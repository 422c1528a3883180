package demo

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestNewRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"", "redis://host:1/notadb"} {
		if _, err := New(Options{Addr: addr}); err == nil {
			t.Errorf("New(%q) succeeded", addr)
		}
	}
}

func TestRunStopsAndCleansUp(t *testing.T) {
	ctx := context.Background()
	w, srv := startWorkload(t, 5*time.Second)
	// Run until the first turbulence cycle has produced an abandonment (about 9s in on an idle
	// machine), not for a fixed time: a starved machine gets there later, an idle one stops
	// sooner.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	var (
		tot       libraryTotals
		err       error
		sawHolder bool
	)
	for giveUp := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if tot, err = w.totals(); err != nil {
			t.Fatal(err)
		}
		if tot.Acquired > 0 && tot.Abandoned > 0 {
			break
		}
		// Holders are recorded, so inspect's HOLDER column names the replica (the record is the
		// description, then a tab and the acquisition's server time in milliseconds).
		if keys, err := srv.Client(t).Keys(ctx, "*:holder").Result(); err == nil {
			for _, k := range keys {
				if v, _ := srv.Client(t).Get(ctx, k).Result(); regexp.MustCompile(`^[a-z]+-[ab] pid \d+(\t\d+)?$`).MatchString(v) {
					sawHolder = true
				}
			}
		}
		if time.Now().After(giveUp) {
			t.Errorf("totals after 60s: %+v; want acquisitions and an abandonment", tot)
			break
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Client(t).DBSize(ctx).Result(); err != nil || n != 0 {
		t.Errorf("keys left after Run: %d (%v)", n, err)
	}
	if !sawHolder {
		t.Error("no holder key naming a replica (\"scheduler-a pid N\") while the workload ran")
	}
	// The line printed after Ctrl-C: nothing is injected any more.
	if line := w.StatusLine(Lifecycle{}); !strings.Contains(line, "| stopped") || strings.Contains(line, "turbulence") {
		t.Errorf("status line after Run: %q, want \"| stopped\" and no turbulence", line)
	}
}

// TestTurbulenceOffRemovesTheLockWithoutTTL checks the recovery path the end-to-end test
// relies on: with turbulence off, the lock without expiry is deleted as the runbook says.
func TestTurbulenceOffRemovesTheLockWithoutTTL(t *testing.T) {
	ctx := context.Background()
	w, srv := startWorkload(t, time.Second)
	rdb := srv.Client(t)
	legacy := DefaultPrefix + "reconciler:legacy-cron"
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()

	waitFor("the lock without TTL", func() bool {
		ttl, err := rdb.TTL(ctx, legacy).Result()
		return err == nil && ttl == -1 // exists, no expiry
	})
	w.SetTurbulence(false)
	waitFor("the lock without TTL to be deleted", func() bool {
		n, err := rdb.Exists(ctx, legacy).Result()
		return err == nil && n == 0
	})
	if line := w.StatusLine(Lifecycle{}); !strings.Contains(line, "| turbulence off") {
		t.Errorf("status line %q does not say turbulence is off", line)
	}
	w.SetTurbulence(true)
	waitFor("the lock without TTL to return", func() bool {
		n, err := rdb.Exists(ctx, legacy).Result()
		return err == nil && n == 1
	})
}

// startWorkload starts a redis-server for the test and a workload on it whose faults repeat
// every turbulencePeriod.
func startWorkload(t *testing.T, turbulencePeriod time.Duration) (*Workload, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	w, err := New(Options{Addr: srv.Addr, TurbulencePeriod: turbulencePeriod})
	if err != nil {
		t.Fatal(err)
	}
	return w, srv
}
