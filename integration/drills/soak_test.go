package drills

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/lease"
)

// soakEnv sets the soak's duration (a Go duration such as 2m); the default keeps make test quick.
const soakEnv = "LOCKWATCH_SOAK"

const defaultSoak = 8 * time.Second

// appliedWrite is one entry of the protected store's append-only log.
type appliedWrite struct {
	fence  int64
	worker int
	seq    int
}

// store is the protected resource: every write goes through FencedSet, and the writes Redis
// applied are appended to a per-key log in the order Redis applied them (a per-key mutex spans
// the FencedSet and the append, as a storage engine serialises writes to one row).
type store struct {
	rows map[string]*row // fixed at creation: only the rows change
}

type row struct {
	mu  sync.Mutex
	log []appliedWrite
	// unsure holds the writes whose FencedSet timed out (the store-operation timeout is 80ms,
	// and a starved machine can exceed it): Redis may have applied them, even after later
	// writes. They stay out of the log; the final check accepts one of them in Redis when its
	// fence is not older than the log's last.
	unsure []appliedWrite
}

func newStore(keys []string) *store {
	s := &store{rows: make(map[string]*row)}
	for _, k := range keys {
		s.rows[k] = &row{}
	}
	return s
}

func (s *store) write(ctx context.Context, ns *lease.Namespace, lockKey string, fence int64, key string, w appliedWrite) error {
	r := s.rows[key]
	r.mu.Lock()
	defer r.mu.Unlock()
	err := ns.FencedSet(ctx, lockKey, fence, key, w.value(), 0)
	switch {
	case err == nil:
		r.log = append(r.log, w)
	case timedOut(err):
		r.unsure = append(r.unsure, w)
	}
	return err
}

// value is what the write stores.
func (w appliedWrite) value() string {
	return fmt.Sprintf("fence=%d worker=%d seq=%d", w.fence, w.worker, w.seq)
}

// timedOut reports whether err is a command's own timeout (its outcome unknown), as opposed to
// an answer or a failure of Redis.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// lastWrite returns the write Redis must hold for the row: the log's last, or a timed-out write
// whose fence is not older (Redis may have applied it last). ok is false when neither matches
// got.
func (r *row) lastWrite(got string) (w appliedWrite, ok bool) {
	last := r.log[len(r.log)-1]
	if got == last.value() {
		return last, true
	}
	for _, u := range r.unsure {
		if u.fence >= last.fence && got == u.value() {
			return u, true
		}
	}
	return last, false
}

// violations counts applied writes whose fence is older than one applied before them.
func (s *store) violations() (n, applied int) {
	for _, r := range s.rows {
		entries := r.log
		var last int64
		for _, e := range entries {
			if e.fence < last {
				n++
			}
			last = max(last, e.fence)
		}
		applied += len(entries)
	}
	return n, applied
}

// tally is what one namespace's workers saw, to reconcile with its metrics.
type tally struct {
	acquired, busy, acquireErrors               int
	released, expired, abandoned, releaseErrors int
	applied, rejected, writeErrors, afterPause  int
	pauses                                      int
	// timeouts counts acquire and write errors that were the call's own timeout on a starved
	// machine, not a failure of Redis.
	timeouts int
}

func (t *tally) add(o tally) {
	t.acquired += o.acquired
	t.busy += o.busy
	t.acquireErrors += o.acquireErrors
	t.released += o.released
	t.expired += o.expired
	t.abandoned += o.abandoned
	t.releaseErrors += o.releaseErrors
	t.applied += o.applied
	t.rejected += o.rejected
	t.writeErrors += o.writeErrors
	t.afterPause += o.afterPause
	t.pauses += o.pauses
	t.timeouts += o.timeouts
}

// TestSoak runs many workers against few keys for a bounded time. Half the workers fence
// (abandon after 2 failed renews), half continue; all take fence tokens on the same locks and
// write only through FencedSet. At random, a worker pauses for longer than the TTL in the middle
// of its critical section, its renewals failing meanwhile, then carries on writing as a buggy
// worker that ignores its context would. The store's log of applied writes must never go back
// in fence order, and every lease must be accounted for in the metrics:
// acquired = released + abandoned + expired (+ release errors, of which there are none).
func TestSoak(t *testing.T) {
	duration := defaultSoak
	if v := os.Getenv(soakEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive Go duration such as 2m", soakEnv, v)
		}
		duration = d
	}
	const (
		workers = 12
		ttl     = 300 * time.Millisecond
		pPause  = 0.08
	)
	srv := redistest.Start(t)
	a := newAudit(t)
	defer checkLeaks(t)()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	a.watchRegistry("soak metrics", reg)
	keys := []string{uniqueKey(t, "a"), uniqueKey(t, "b"), uniqueKey(t, "c")}
	data := map[string]string{}
	var dataKeys []string
	for _, k := range keys {
		data[k] = "{" + k + "}:data" // beside the lock, in its slot
		dataKeys = append(dataKeys, data[k])
	}
	st := newStore(dataKeys)
	policies := map[string]lease.Policy{
		"soak-abandon": {TTL: ttl, RenewInterval: 100 * time.Millisecond, RenewTimeout: 80 * time.Millisecond,
			MaxRenewFailures: 2, AcquireTimeout: 500 * time.Millisecond, RetryBackoff: 5 * time.Millisecond,
			ReleaseTimeout: time.Second, Fencing: true},
		"soak-continue": {TTL: ttl, RenewInterval: 100 * time.Millisecond, RenewTimeout: 80 * time.Millisecond,
			OnRenewFailure: lease.Continue, AcquireTimeout: 500 * time.Millisecond, RetryBackoff: 5 * time.Millisecond,
			ReleaseTimeout: time.Second, Fencing: true},
	}
	nsOf := func(i int) string {
		if i%2 == 0 {
			return "soak-abandon"
		}
		return "soak-continue"
	}
	ws := make([]*worker, workers)
	nss := make([]*lease.Namespace, workers)
	for i := range ws {
		ws[i] = newWorkerOn(t, a, fmt.Sprintf("worker%d", i), srv.Addr, true, reg)
		nss[i] = ws[i].namespace(t, nsOf(i), policies[nsOf(i)])
	}

	tallies := make([]tally, workers)
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, ns, tl := ws[i], nss[i], &tallies[i]
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			seq := 0
			for time.Now().Before(deadline) {
				key := keys[rng.IntN(len(keys))]
				l, err := ns.Acquire(ctx, key)
				switch {
				case errors.Is(err, lease.ErrBusy):
					tl.busy++
					continue
				case err != nil:
					tl.acquireErrors++
					if timedOut(err) {
						tl.timeouts++
					}
					a.err("acquire error", err)
					continue
				}
				tl.acquired++
				if tok, err := w.rdb.Get(ctx, key).Result(); err == nil {
					a.add(tok, key)
				}
				paused := false
				for n := 1 + rng.IntN(3); n > 0; n-- {
					if rng.Float64() < pPause {
						// A stop-the-world pause longer than the TTL; renewals fail meanwhile.
						tl.pauses++
						w.proxy.Blackhole()
						time.Sleep(ttl + time.Duration(rng.Int64N(int64(ttl))))
						w.proxy.Heal()
						paused = true
					}
					if paused {
						// The lease may be gone (Continue) or abandoned (Abandon, context
						// cancelled): this worker writes on regardless, as a buggy one would.
						tl.afterPause++
					}
					seq++
					wctx, cancel := context.WithTimeout(ctx, time.Second)
					err := st.write(wctx, ns, key, l.Fence(), data[key], appliedWrite{fence: l.Fence(), worker: i, seq: seq})
					cancel()
					switch {
					case err == nil:
						tl.applied++
					case errors.Is(err, lease.ErrStaleFence):
						tl.rejected++
					default:
						tl.writeErrors++
						if timedOut(err) {
							tl.timeouts++
						}
						a.err("write error", err)
					}
					time.Sleep(time.Duration(rng.Int64N(int64(2 * time.Millisecond))))
				}
				err = l.Release(ctx)
				a.err("release error", err)
				switch {
				case err == nil:
					tl.released++
				case errors.Is(err, lease.ErrNotOwned):
					tl.expired++
				case errors.Is(err, lease.ErrAbandoned):
					tl.abandoned++
				default:
					tl.releaseErrors++
				}
			}
		}()
	}
	wg.Wait()
	for _, w := range ws {
		w.close()
	}

	violations, logged := st.violations()
	if violations != 0 {
		t.Errorf("%d of %d applied writes went back in fence order", violations, logged)
	}
	total := tally{}
	for ns, p := range map[string]int{"soak-abandon": 0, "soak-continue": 1} {
		var nt tally
		for i := p; i < workers; i += 2 {
			nt.add(tallies[i])
		}
		total.add(nt)
		if nt.acquired != nt.released+nt.abandoned+nt.expired+nt.releaseErrors {
			t.Errorf("%s: acquired %d != released %d + abandoned %d + expired %d + release errors %d",
				ns, nt.acquired, nt.released, nt.abandoned, nt.expired, nt.releaseErrors)
		}
		abandonedMetric := value(t, reg, ns, "lock_abandoned_total")
		wantMetrics(t, "soak", reg, ns, map[string]bound{
			"lock_acquire_wait_seconds/acquired": eq(float64(nt.acquired)),
			"lock_acquire_wait_seconds/busy":     eq(float64(nt.busy)),
			"lock_acquire_wait_seconds/error":    eq(float64(nt.acquireErrors)),
			"lock_releases_total/ok":             eq(float64(nt.released)),
			"lock_releases_total/not_owned":      eq(float64(nt.expired)),
			"lock_releases_total/skipped":        eq(float64(nt.abandoned)),
			"lock_releases_total/error":          eq(float64(nt.releaseErrors)),
			"lock_abandoned_total":               eq(float64(nt.abandoned)),
			"lock_fenced_writes_total/applied":   eq(float64(nt.applied)),
			"lock_fenced_writes_total/rejected":  eq(float64(nt.rejected)),
			"lock_held":                          eq(0),
			"lock_held_seconds":                  eq(float64(nt.acquired)),
		})
		if ns == "soak-continue" && abandonedMetric != 0 {
			t.Errorf("the Continue namespace abandoned %v leases", abandonedMetric)
		}
		t.Logf("%s: acquired %d (busy %d, errors %d) = released %d + abandoned %d + expired %d + release errors %d; writes applied %d, rejected %d, errors %d; pauses %d, writes after a pause %d",
			ns, nt.acquired, nt.busy, nt.acquireErrors, nt.released, nt.abandoned, nt.expired, nt.releaseErrors,
			nt.applied, nt.rejected, nt.writeErrors, nt.pauses, nt.afterPause)
	}
	if logged != total.applied {
		t.Errorf("store log holds %d writes, workers counted %d applied", logged, total.applied)
	}
	// Redis agrees with the log: each data key holds the last applied write and its fence.
	direct := srv.Client(t)
	defer direct.Close()
	for _, k := range dataKeys {
		r := st.rows[k]
		if len(r.log) == 0 {
			continue
		}
		got := direct.Get(ctx, k).Val()
		last, ok := r.lastWrite(got)
		if !ok {
			t.Errorf("%s = %q, want the log's last write %q (or a timed-out write with a fence not older)", k, got, last.value())
		}
	}
	// The drill must have exercised what it claims to.
	if total.pauses == 0 || total.rejected == 0 || total.abandoned == 0 || total.expired == 0 {
		t.Errorf("soak too gentle: %d pauses, %d rejected writes, %d abandoned, %d expired", total.pauses, total.rejected, total.abandoned, total.expired)
	}
	if failures := total.writeErrors + total.acquireErrors - total.timeouts; failures != 0 {
		t.Errorf("%d write errors and %d acquire errors, %d of them timeouts: Redis itself never failed in this drill",
			total.writeErrors, total.acquireErrors, total.timeouts)
	}
	if total.timeouts != 0 {
		t.Logf("%d calls timed out on a starved machine (outcome unknown, reconciled above)", total.timeouts)
	}
	t.Logf("soak %s, %d workers, %d keys: %d operations (%d acquire attempts, %d writes, %d releases), %d pauses > TTL, %d stale writes rejected, violations: %d",
		duration, workers, len(keys), total.acquired+total.busy+total.acquireErrors+total.applied+total.rejected+total.writeErrors+total.acquired,
		total.acquired+total.busy+total.acquireErrors, total.applied+total.rejected+total.writeErrors, total.acquired,
		total.pauses, total.rejected, violations)
}
