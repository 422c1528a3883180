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

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestSchedulerStoryTellsWhenItAbandons: the banner's scheduler story says after how many failed
// renews scheduler-b abandons its job, and the partition it meets ends that way: the lease's
// "lock abandoned" line reports that many consecutive failures. (It said 3, the policy's
// MaxRenewFailures, while the lease lapses at its ValidUntil after 2 failed renews at TTL/3.)
func TestSchedulerStoryTellsWhenItAbandons(t *testing.T) {
	var story string
	for _, ns := range Namespaces(DefaultPrefix) {
		if ns.Name == "scheduler" {
			story = ns.Story
		}
	}
	m := regexp.MustCompile(`after (\d+) failed renews`).FindStringSubmatch(story)
	if m == nil {
		t.Fatalf("scheduler story %q does not say after how many failed renews it abandons", story)
	}
	claimed, _ := strconv.Atoi(m[1])

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
		if rec.Failures != claimed {
			t.Errorf("scheduler-b abandoned after %d failed renews; the story says %d: %q", rec.Failures, claimed, story)
		}
		return
	}
	t.Fatalf("scheduler-b did not abandon its job; log:\n%s", logs.String())
}
