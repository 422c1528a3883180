package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestSchedulerStoryTellsWhenItAbandons: the banner's scheduler story says after how many failed
// renews scheduler-b abandons its job, and the partition it meets ends that way: the lease's
// "lock abandoned" line reports that many consecutive failures. (It said 3, the policy's
// MaxRenewFailures, while the lease lapses at its ValidUntil after 2 failed renews at TTL/3.)
func TestSchedulerStoryTellsWhenItAbandons(t *testing.T) {
	var scheduler Namespace
	for _, ns := range Namespaces(DefaultPrefix) {
		if ns.Name == "scheduler" {
			scheduler = ns
		}
	}
	story := scheduler.Story
	m := regexp.MustCompile(`after (\d+) failed renews`).FindStringSubmatch(story)
	if m == nil {
		t.Fatalf("scheduler story %q does not say after how many failed renews it abandons", story)
	}
	claimed, _ := strconv.Atoi(m[1])
	// The renews that start before the lapse (TTL less 1% and 2ms after the acquire; see
	// docs/lease.md), at most MaxRenewFailures of them.
	p := scheduler.policy
	lapse := p.TTL - p.TTL/100 - 2*time.Millisecond
	before := int((lapse+p.RenewInterval-1)/p.RenewInterval) - 1
	if want := min(before, p.MaxRenewFailures); claimed != want {
		t.Errorf("the story says %d failed renews; TTL %v, renew every %v and MaxRenewFailures %d abandon after %d: %q",
			claimed, p.TTL, p.RenewInterval, p.MaxRenewFailures, want, story)
	}

	srv := redistest.Start(t)
	logs := &testkit.SyncBuffer{}
	w, err := New(Options{Addr: srv.Addr, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.partitionScheduler(context.Background())

	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var rec struct {
			Msg      string `json:"msg"`
			Replica  string `json:"replica"`
			Failures int    `json:"consecutive_failures"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Replica != "scheduler-b" || !strings.HasPrefix(rec.Msg, "lock abandoned") {
			continue
		}
		// On a loaded machine a late renew timer can leave fewer failures before the lapse,
		// never more.
		if rec.Failures < 1 || rec.Failures > claimed {
			t.Errorf("scheduler-b abandoned after %d failed renews; the story says %d: %q", rec.Failures, claimed, story)
		}
		return
	}
	t.Fatalf("scheduler-b did not abandon its job; log:\n%s", logs.String())
}
