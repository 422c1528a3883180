package redistest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// clusterChangeTimeout bounds how long every node may take to agree on a slot move or a failover.
const clusterChangeTimeout = 30 * time.Second

// Slot is the hash slot of key, as the cluster computes it.
func (c *Cluster) Slot(tb testing.TB, key string) int64 {
	tb.Helper()
	reply, err := c.anyNode(tb).Do(context.Background(), "CLUSTER", "KEYSLOT", key)
	if err != nil {
		tb.Fatalf("redistest: CLUSTER KEYSLOT: %v", err)
	}
	return reply.(int64)
}

// Masters lists the running nodes whose role is master, in Nodes order.
func (c *Cluster) Masters(tb testing.TB) []*Server {
	tb.Helper()
	var out []*Server
	for _, n := range c.Nodes {
		if n.running() && n.role(context.Background()) == "master" {
			out = append(out, n)
		}
	}
	return out
}

// MigrateSlot moves slot, with its keys, from the master serving it to master to, the way
// `redis-cli --cluster reshard` does: SETSLOT IMPORTING on the target and MIGRATING on the
// source, MIGRATE of the slot's keys in batches, then SETSLOT NODE on the target, the source and
// every other master. It returns once every running node reports to as the slot's owner.
func (c *Cluster) MigrateSlot(tb testing.TB, slot int64, to *Server) {
	tb.Helper()
	c.BeginSlotMigration(tb, slot, to).Finish(tb)
}

// SlotMigration is a slot move that BeginSlotMigration began and Finish ends: in between, the
// slot's keys are on the target while both masters still mark the slot as moving (IMPORTING on
// the target, MIGRATING on the source), as during a reshard that is under way.
type SlotMigration struct {
	c        *Cluster
	slot     int64
	from, to *Server
	toID     string
}

// BeginSlotMigration does the first half of MigrateSlot: SETSLOT IMPORTING and MIGRATING, and
// the MIGRATE of every key of the slot. The slot is still the source's until Finish.
func (c *Cluster) BeginSlotMigration(tb testing.TB, slot int64, to *Server) *SlotMigration {
	tb.Helper()
	return c.beginSlotMigration(tb, slot, to, 100, 0)
}

// MigrateSlotSlowly is MigrateSlot with batch keys per MIGRATE and pause after each, as a
// reshard of a large slot meets its clients: keys that share a hash tag are split between the
// two masters for a while, and a multi-key command on them is answered TRYAGAIN.
func (c *Cluster) MigrateSlotSlowly(tb testing.TB, slot int64, to *Server, batch int, pause time.Duration) {
	tb.Helper()
	c.beginSlotMigration(tb, slot, to, batch, pause).Finish(tb)
}

// SplitSlot begins moving slot to master to and MIGRATEs only keys (which must be in the slot),
// leaving the slot's other keys on the source: a reshard caught between two batches, where a
// command on keys of both halves is answered TRYAGAIN. MoveRest moves the others; Finish ends
// the move.
func (c *Cluster) SplitSlot(tb testing.TB, slot int64, to *Server, keys ...string) *SlotMigration {
	tb.Helper()
	m := c.beginSlotMigration(tb, slot, to, 0, 0)
	host, port, err := net.SplitHostPort(to.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	c.must(tb, m.from, args...)
	return m
}

// MoveRest MIGRATEs every key of the slot that is still on the source to the target; the slot
// stays marked as moving until Finish. It returns an error rather than failing the test, so
// that a hook may call it while a command is under way.
func (m *SlotMigration) MoveRest(ctx context.Context) error {
	host, port, err := net.SplitHostPort(m.to.Addr)
	if err != nil {
		return err
	}
	for {
		reply, err := m.from.Do(ctx, "CLUSTER", "GETKEYSINSLOT", m.slot, 100)
		if err != nil {
			return err
		}
		keys, _ := reply.([]any)
		if len(keys) == 0 {
			return nil
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		if _, err := m.from.Do(ctx, append(args, keys...)...); err != nil {
			return err
		}
	}
}

func (c *Cluster) beginSlotMigration(tb testing.TB, slot int64, to *Server, batch int, pause time.Duration) *SlotMigration {
	tb.Helper()
	ctx := context.Background()
	var from *Server
	for _, n := range c.Nodes {
		if n.running() && n.servesSlot(ctx, slot) {
			from = n
		}
	}
	if from == nil || from == to {
		tb.Fatalf("redistest: slot %d: no other master serves it (from %v)", slot, from)
	}
	fromID, toID := c.nodeID(tb, from), c.nodeID(tb, to)
	c.must(tb, to, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	c.must(tb, from, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	if batch > 0 {
		c.migrateKeys(tb, slot, from, to, batch, pause)
	}
	return &SlotMigration{c: c, slot: slot, from: from, to: to, toID: toID}
}

// migrateKeys MIGRATEs every key of slot that from holds to to, batch keys at a time, with
// pause after each batch.
func (c *Cluster) migrateKeys(tb testing.TB, slot int64, from, to *Server, batch int, pause time.Duration) {
	tb.Helper()
	host, port, err := net.SplitHostPort(to.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	for {
		reply := c.must(tb, from, "CLUSTER", "GETKEYSINSLOT", slot, batch)
		keys, _ := reply.([]any)
		if len(keys) == 0 {
			return
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		c.must(tb, from, append(args, keys...)...)
		time.Sleep(pause)
	}
}

// From is the master the slot moves from.
func (m *SlotMigration) From() *Server { return m.from }

// Finish gives the slot to the target: SETSLOT NODE on the target, the source and every other
// master. It returns once every running node reports the target as the slot's owner.
func (m *SlotMigration) Finish(tb testing.TB) {
	tb.Helper()
	c, slot, toID := m.c, m.slot, m.toID
	c.must(tb, m.to, "CLUSTER", "SETSLOT", slot, "NODE", toID)
	c.must(tb, m.from, "CLUSTER", "SETSLOT", slot, "NODE", toID)
	for _, n := range c.Masters(tb) {
		if n != m.to && n != m.from {
			c.must(tb, n, "CLUSTER", "SETSLOT", slot, "NODE", toID)
		}
	}
	ctx := context.Background()
	c.waitAgreed(tb, fmt.Sprintf("slot %d owned by %s", slot, m.to.Addr), func(n *Server) bool {
		return n.slotOwner(ctx, slot) == toID
	})
}

// Abandon takes the move back, as an operator does with a reshard that failed half way: the
// source drops its MIGRATING mark (SETSLOT STABLE; while it is set, the source redirects a key
// it does not hold, the returning ones included), the slot's keys MIGRATE back to it, and the
// target drops its IMPORTING mark. The slot never changed owner, so the cluster's slot map is
// the same as before the move began.
func (m *SlotMigration) Abandon(tb testing.TB) {
	tb.Helper()
	m.c.must(tb, m.from, "CLUSTER", "SETSLOT", m.slot, "STABLE")
	m.c.migrateKeys(tb, m.slot, m.to, m.from, 100, 0)
	m.c.must(tb, m.to, "CLUSTER", "SETSLOT", m.slot, "STABLE")
}

// Failover promotes a replica of master with CLUSTER FAILOVER (the coordinated, manual
// failover: no write is lost) and returns it once every running node sees it serving master's
// former slots.
func (c *Cluster) Failover(tb testing.TB, master *Server) *Server {
	tb.Helper()
	ctx := context.Background()
	replica := c.replicaOf(tb, master)
	replicaID := c.nodeID(tb, replica)
	slot := master.anySlot(ctx)
	c.must(tb, replica, "CLUSTER", "FAILOVER")
	c.waitAgreed(tb, fmt.Sprintf("%s promoted", replica.Addr), func(n *Server) bool {
		return replica.role(ctx) == "master" && (slot < 0 || n.slotOwner(ctx, slot) == replicaID)
	})
	return replica
}

// StopMaster kills master's process (SIGKILL: writes not yet replicated are lost), waits for
// the cluster's own failover (after cluster-node-timeout) to promote one of its replicas,
// restarts the killed node, which rejoins as a replica of the promoted one, and returns the
// promoted replica.
func (c *Cluster) StopMaster(tb testing.TB, master *Server) *Server {
	tb.Helper()
	ctx := context.Background()
	replica := c.replicaOf(tb, master)
	replicaID := c.nodeID(tb, replica)
	slot := master.anySlot(ctx)
	master.Kill()
	c.waitAgreed(tb, fmt.Sprintf("%s promoted after %s stopped", replica.Addr, master.Addr), func(n *Server) bool {
		return replica.role(ctx) == "master" && (slot < 0 || n.slotOwner(ctx, slot) == replicaID)
	})
	master.Restart()
	c.waitAgreed(tb, fmt.Sprintf("%s back as a replica", master.Addr), func(*Server) bool {
		return master.role(ctx) == "slave" && master.replicationField(ctx, "master_link_status") == "up"
	})
	return replica
}

// HasReplica reports whether a running replica follows master.
func (c *Cluster) HasReplica(master *Server) bool { return c.findReplica(master) != nil }

func (c *Cluster) replicaOf(tb testing.TB, master *Server) *Server {
	tb.Helper()
	r := c.findReplica(master)
	if r == nil {
		tb.Fatalf("redistest: master %s has no replica", master.Addr)
	}
	return r
}

func (c *Cluster) findReplica(master *Server) *Server {
	ctx := context.Background()
	for _, n := range c.Nodes {
		if n != master && n.running() && n.role(ctx) == "slave" && n.masterPort(ctx) == fmt.Sprint(master.Port()) {
			return n
		}
	}
	return nil
}

// anySlot is a slot the node serves as master, -1 when none.
func (s *Server) anySlot(ctx context.Context) int64 {
	for slot := int64(0); slot < 16384; slot += 16 {
		if s.servesSlot(ctx, slot) {
			return slot
		}
	}
	return -1
}

func (c *Cluster) anyNode(tb testing.TB) *Server {
	tb.Helper()
	for _, n := range c.Nodes {
		if n.running() {
			return n
		}
	}
	tb.Fatal("redistest: no cluster node is running")
	return nil
}

func (c *Cluster) nodeID(tb testing.TB, s *Server) string {
	tb.Helper()
	id, _ := c.must(tb, s, "CLUSTER", "MYID").(string)
	return id
}

func (c *Cluster) must(tb testing.TB, s *Server, args ...any) any {
	tb.Helper()
	reply, err := s.Do(context.Background(), args...)
	if err != nil {
		tb.Fatalf("redistest: %s on %s: %v", strings.TrimSpace(fmt.Sprint(args...)), s.Addr, err)
	}
	return reply
}

// waitAgreed waits until ok holds on every running node, and the cluster is ready.
func (c *Cluster) waitAgreed(tb testing.TB, what string, ok func(n *Server) bool) {
	tb.Helper()
	deadline := time.Now().Add(clusterChangeTimeout)
	for {
		agreed := true
		for _, n := range c.Nodes {
			if n.running() && !ok(n) {
				agreed = false
				break
			}
		}
		if agreed {
			c.waitReady(tb)
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: cluster did not agree on %s within %s", what, clusterChangeTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) role(ctx context.Context) string {
	return s.replicationField(ctx, "role")
}

func (s *Server) masterPort(ctx context.Context) string {
	return s.replicationField(ctx, "master_port")
}

func (s *Server) replicationField(ctx context.Context, name string) string {
	reply, err := s.Do(ctx, "INFO", "replication")
	if err != nil {
		return ""
	}
	text, _ := reply.(string)
	for line := range strings.SplitSeq(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// slotOwner is the node id this node's CLUSTER SLOTS names as slot's master, "" when none.
func (s *Server) slotOwner(ctx context.Context, slot int64) string {
	reply, err := s.Do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return ""
	}
	ranges, _ := reply.([]any)
	for _, r := range ranges {
		fields, _ := r.([]any)
		if len(fields) < 3 {
			continue
		}
		lo, _ := fields[0].(int64)
		hi, _ := fields[1].(int64)
		master, _ := fields[2].([]any)
		if slot >= lo && slot <= hi && len(master) >= 3 {
			id, _ := master[2].(string)
			return id
		}
	}
	return ""
}
