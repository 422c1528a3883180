package clients_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// replicaCaughtUp waits until the replica has applied everything the master wrote so far, so
// that a scrape of the replica can be compared with the clients' truth.
func replicaCaughtUp(t *testing.T, master, replica *redis.Client) {
	t.Helper()
	ctx := context.Background()
	offset := func(c *redis.Client, field string) string {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return v
			}
		}
		return ""
	}
	want := offset(master, "master_repl_offset")
	waitUntil(t, "the replica to apply the master's writes", func() bool {
		return offset(replica, "slave_repl_offset") == want && offset(replica, "master_link_status") == "up"
	})
}

// TestLifecycleOnReplica: an exporter pointed at a replica, on each feed, while every client
// plays its lifecycle on the master (each step followed by a scrape once the replica has it):
// on a replica an expiry arrives as the master's DEL, so no counter may exceed the clients'
// truth, and where the counters fall short of it lifecycle_following must have said so.
func TestLifecycleOnReplica(t *testing.T) {
	for _, feed := range []collectors.FeedSource{collectors.FeedTracking, collectors.FeedNotifications} {
		for _, kind := range clients.Kinds() {
			t.Run(string(feed)+"/"+string(kind), func(t *testing.T) { onReplica(t, feed, kind) })
		}
	}
}

func onReplica(t *testing.T, feed collectors.FeedSource, kind clients.Kind) {
	master := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", notifyAll))
	host, port, _ := strings.Cut(master.Addr, ":")
	replica := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", notifyAll, "--replicaof", host, port))
	mc, rc := master.Client(t), replica.Client(t)
	replicaCaughtUp(t, mc, rc)
	ns, prefix := lockNamespace(kind, "lc:")
	exp := startExporter(t, replica.Addr, feed, []collectors.Namespace{ns})
	gap := &gapRecorder{exp: exp, stopped: map[string]bool{}, recording: true}
	r := clients.NewRunner(t, master.Addr)
	first, second := clients.Start(t, kind, master.Addr), clients.Start(t, kind, master.Addr)
	h := spacedHolders{a: r.Holder(first, "A"), b: r.Holder(second, "B"), c: r.Holder(first, "C")}
	playSpaced(t, r, kind, h, "lc:", func() {
		replicaCaughtUp(t, mc, rc)
		gap.scrape()
	})
	replicaCaughtUp(t, mc, rc)
	got := exp.scrape()
	checkFaulted(t, got[ns.Name], gap.stopped[ns.Name], r, prefix)
}
