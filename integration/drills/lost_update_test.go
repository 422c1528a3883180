package drills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/integration/internal/pgtest"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// lostUpdateEnv sets how long each case of TestLostUpdates injects faults (a Go duration).
const lostUpdateEnv = "LOCKWATCH_LOST_UPDATE_DRILL"

// noClaimEnv, when set, runs the holders without the claim at acquisition and with a fence
// compared only with the last write: the drill then reports (and fails on) the updates those
// weaker guards lose, which shows that it detects lost updates at all.
const noClaimEnv = "LOCKWATCH_DRILL_NOCLAIM"

const holders = 4

// TestLostUpdates is the read-modify-write drill: holder processes take a fenced
// lease, read a counter, and write it back plus one through the store's fencing guard, while
// the drill restarts the lock's Redis (no persistence: every lock and fence key is lost) or
// SIGSTOPs holders for longer than their TTL. The counter lives where the fault does not reach
// it: a second redis-server with appendfsync always, PostgreSQL, or (under stops) beside the
// lock in its slot. The store itself counts the increments it applied (keyspace notifications
// of the counter's SETs; a trigger in PostgreSQL), so a lost update is exactly
// applied - counter, whatever the stopped processes believed. It must be 0.
func TestLostUpdates(t *testing.T) {
	d := 8 * time.Second
	if v := os.Getenv(lostUpdateEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive Go duration such as 1m", lostUpdateEnv, v)
		}
	}
	noClaim := os.Getenv(noClaimEnv) != ""
	for _, tc := range []struct {
		name, store string
		restarts    bool // else SIGSTOPs
	}{
		{"restarts/redis-aof", storeRedis, true},
		{"restarts/postgres", storePostgres, true},
		{"sigstops/redis-aof", storeRedis, false},
		{"sigstops/postgres", storePostgres, false},
		{"sigstops/beside-lock", storeBeside, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runLostUpdates(t, tc.store, tc.restarts, d, noClaim)
		})
	}
}

func runLostUpdates(t *testing.T, store string, restarts bool, d time.Duration, noClaim bool) {
	ctx := ctxFor(t, d+2*time.Minute)
	notify := redistest.WithArgs("--notify-keyspace-events", "K$")
	lock := redistest.Start(t, notify)
	cfg := holderConfig{LockAddr: lock.Addr, Store: store, LockKey: "counter:lock", NoClaim: noClaim}
	var applied func() int64 // what the store counted
	var counter func() int64
	switch store {
	case storeBeside:
		cfg.DataKey = "{counter:lock}:value"
		applied = countSets(t, lock.Client(t), cfg.DataKey)
		counter = redisCounter(t, lock.Client(t), cfg.DataKey)
	case storeRedis:
		data := redistest.Start(t, notify, redistest.WithArgs("--appendonly", "yes", "--appendfsync", "always"))
		cfg.StoreAddr, cfg.DataKey = data.Addr, "counter:value"
		applied = countSets(t, data.Client(t), cfg.DataKey)
		counter = redisCounter(t, data.Client(t), cfg.DataKey)
	case storePostgres:
		pg := pgtest.Start(t)
		db := pg.DB(t)
		if _, err := db.ExecContext(ctx, counterSchema); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO counters (id) VALUES ('c1')`); err != nil {
			t.Fatal(err)
		}
		cfg.StoreAddr, cfg.DataKey = pg.DSN, "c1"
		row := func(col string) int64 {
			var v int64
			if err := db.QueryRowContext(ctx, `SELECT `+col+` FROM counters WHERE id = 'c1'`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		applied = func() int64 { return row("applied") }
		counter = func() int64 { return row("counter") }
	}
	cfg.Until = time.Now().Add(d)
	procs := startHolders(t, cfg)

	faults := 0
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	// Faults stop a TTL before the holders do, so that none is stopped as it exits.
	for faultsUntil := cfg.Until.Add(-holderPolicy.TTL); ; faults++ {
		var pause time.Duration
		if restarts {
			pause = 700*time.Millisecond + time.Duration(rng.Int64N(int64(600*time.Millisecond)))
		} else {
			pause = time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
		}
		time.Sleep(pause)
		if !time.Now().Before(faultsUntil) {
			break
		}
		if restarts {
			lock.Restart()
			continue
		}
		// Just past the TTL: the holder resumes soon after another took the lock, while that
		// one is between its read and its first write, where a guard that only compares
		// with the last write lets the stale holder through.
		ttl := holderPolicy.TTL
		procs[rng.IntN(len(procs))].stopFor(t, ttl+time.Duration(rng.Int64N(int64(ttl/3))))
	}
	var total holderTally
	for _, p := range procs {
		tl := p.wait(t, 30*time.Second)
		total.Acquired += tl.Acquired
		total.Applied += tl.Applied
		total.Rejected += tl.Rejected
		total.ClaimRejected += tl.ClaimRejected
		total.Errors += tl.Errors
	}
	got, final := applied(), counter()
	lost := got - final
	t.Logf("%s, %s, %d faults over %s: store applied %d increments, counter %d, lost %d; holders acquired %d, acknowledged %d, writes refused %d, claims refused %d, errors %d",
		store, map[bool]string{true: "lock Redis restarts", false: "holder SIGSTOPs"}[restarts], faults, d,
		got, final, lost, total.Acquired, total.Applied, total.Rejected, total.ClaimRejected, total.Errors)
	if lost != 0 {
		t.Errorf("%d lost updates: the store applied %d increments but the counter is %d", lost, got, final)
	}
	if got == 0 || faults == 0 {
		t.Errorf("drill too gentle: %d increments applied, %d faults", got, faults)
	}
	if int64(total.Applied) > got {
		t.Errorf("holders acknowledged %d writes, the store counted %d", total.Applied, got)
	}
}

// holderProc is one holder process.
type holderProc struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

func startHolders(t *testing.T, cfg holderConfig) []*holderProc {
	t.Helper()
	var procs []*holderProc
	for i := range holders {
		cfg.Name = fmt.Sprintf("holder%d", i)
		raw, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		p := &holderProc{out: &bytes.Buffer{}, done: make(chan error, 1)}
		p.cmd = exec.Command(os.Args[0], "-test.run=^$")
		p.cmd.Env = append(os.Environ(), holderEnv+"="+string(raw))
		p.cmd.Stdout = p.out
		p.cmd.Stderr = p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { p.done <- p.cmd.Wait() }()
		t.Cleanup(func() {
			// A holder still running when the test ends (it failed early) is ended here.
			select {
			case <-p.done:
			default:
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		})
		procs = append(procs, p)
	}
	return procs
}

// stopFor SIGSTOPs the holder for d, then lets it go on.
func (p *holderProc) stopFor(t *testing.T, d time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP holder: %v", err)
	}
	time.Sleep(d)
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT holder: %v", err)
	}
}

// wait returns the holder's tally once it exits.
func (p *holderProc) wait(t *testing.T, limit time.Duration) holderTally {
	t.Helper()
	var err error
	select {
	case err = <-p.done:
		p.done <- err // for the cleanup
	case <-time.After(limit):
		t.Fatalf("holder did not exit within %s of its deadline: %s", limit, p.out)
	}
	var tl holderTally
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	if err != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &tl) != nil {
		t.Fatalf("holder ended with %v: %s", err, p.out)
	}
	return tl
}

// countSets counts, from keyspace notifications, the SETs Redis applied to key; the returned
// function waits until every notification sent before it was called has arrived.
func countSets(t *testing.T, rdb *redis.Client, key string) func() int64 {
	t.Helper()
	ctx := context.Background()
	const marker = "drill:counted"
	sub := rdb.Subscribe(ctx, "__keyspace@0__:"+key, "__keyspace@0__:"+marker)
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	var sets, markers atomic.Int64
	go func() {
		for m := range sub.Channel() {
			switch {
			case m.Payload == "set" && strings.HasSuffix(m.Channel, ":"+key):
				sets.Add(1)
			case strings.HasSuffix(m.Channel, marker):
				markers.Add(1)
			}
		}
	}()
	return func() int64 {
		// Notifications arrive in order: once the marker's has, every earlier one has too.
		want := markers.Load() + 1
		if err := rdb.Set(ctx, marker, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if markers.Load() >= want {
				return sets.Load()
			}
		}
		t.Fatal("keyspace notification of the marker never arrived")
		return 0
	}
}

func redisCounter(t *testing.T, rdb *redis.Client, key string) func() int64 {
	return func() int64 {
		v, err := getInt(context.Background(), rdb, key)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
