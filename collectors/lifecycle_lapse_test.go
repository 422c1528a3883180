package collectors

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// gateHook holds the first pipeline of the exporter's client that matches until before has
// run: it orders the exporter's reads against a holder's writes and the server's clock, with no
// race against the clock. With unanswered set, the held pipeline then fails as if Redis had not
// answered (it is not sent): the exporter reads the same keys again at its next drain.
type gateHook struct {
	matches    func(ctx context.Context, cmds []redis.Cmder) bool
	before     func()
	unanswered bool
	once       sync.Once
	fired      chan struct{}
}

// errHeld is the failure of a pipeline a gateHook answers in Redis's place.
var errHeld = errors.New("held by the test: no answer")

func newGateHook(matches func(context.Context, []redis.Cmder) bool, before func()) *gateHook {
	return &gateHook{matches: matches, before: before, fired: make(chan struct{})}
}

func (g *gateHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		held := false
		if g.matches(ctx, cmds) {
			g.once.Do(func() {
				g.before()
				held = true
				close(g.fired)
			})
		}
		if held && g.unanswered {
			for _, c := range cmds {
				c.SetErr(errHeld)
			}
			return errHeld
		}
		return next(ctx, cmds)
	}
}

// await fails the test unless the gate fired within 20 s.
func (g *gateHook) await(t *testing.T) {
	t.Helper()
	select {
	case <-g.fired:
	case <-time.After(20 * time.Second):
		t.Fatal("the gated read never ran")
	}
}

// rereadOf matches a re-read pipeline of key (its TYPE).
func rereadOf(key string) func(context.Context, []redis.Cmder) bool {
	return func(_ context.Context, cmds []redis.Cmder) bool {
		return slices.ContainsFunc(cmds, func(c redis.Cmder) bool {
			args := c.Args()
			return c.Name() == "type" && len(args) == 2 && args[1] == key
		})
	}
}

// sweepGate marks the scrape whose identity read (and so its sweep) a test holds back.
type sweepGate struct{}

// identityOfGatedScrape matches the identity pipeline (INFO, TIME) of a scrape whose context
// carries sweepGate.
func identityOfGatedScrape(ctx context.Context, cmds []redis.Cmder) bool {
	return ctx.Value(sweepGate{}) != nil && slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "time" })
}

// waitServerPast polls the server's clock until it is past at (ms); from a hook, so errors are
// reported with Errorf.
func waitServerPast(t *testing.T, c *redis.Client, at int64) {
	for {
		now, err := c.Time(context.Background()).Result()
		if err != nil {
			t.Errorf("TIME: %v", err)
			return
		}
		if now.UnixMilli() > at {
			return
		}
		time.Sleep(time.Duration(at-now.UnixMilli()+1) * time.Millisecond)
	}
}

// renew is the holder's PEXPIRE; it must land while the key is live (before its expiry).
func renew(t *testing.T, c *redis.Client, key string) {
	ok, err := c.PExpire(context.Background(), key, time.Minute).Result()
	if err != nil || !ok {
		t.Errorf("PEXPIRE %s: %v %v: the renewal did not land before the expiry", key, ok, err)
	}
}

// TestLifecycleRenewalBeforeExpiryReadAfterIt: a holder renews its lock before the expiry, and
// the exporter reads the change only after the old expiry passed, by the server's clock. The
// renewal is a renewal, never a lapse and a takeover: on the tracking feed, without the holder
// read (the documented least-privilege ACL), the change is known to have come before the
// expiry. The exporter's reads are held by a hook on its client until the server's clock is
// past the expiry: the order is fixed, not raced.
func TestLifecycleRenewalBeforeExpiryReadAfterIt(t *testing.T) {
	cases := []struct {
		name string
		gate func(admin *redis.Client, key string, expireAt int64) *gateHook
		// act renews the key (unless the gate does) and runs the gated read.
		act func(t *testing.T, admin *redis.Client, s *Scanner, g *gateHook, key string)
	}{
		{"the re-read after the expiry", func(admin *redis.Client, key string, expireAt int64) *gateHook {
			// The re-read's time is taken before it is sent: the first one, held past the
			// expiry, goes unanswered, and the next drain reads the key again after it.
			g := newGateHook(rereadOf(key), func() { waitServerPast(t, admin, expireAt+index.ExpirySlack+20) })
			g.unanswered = true
			return g
		}, func(t *testing.T, admin *redis.Client, s *Scanner, g *gateHook, key string) {
			renew(t, admin, key)
			g.await(t)
		}},
		{"the sweep after the expiry, renewed since the drain", func(admin *redis.Client, key string, expireAt int64) *gateHook {
			return newGateHook(identityOfGatedScrape, func() {
				renew(t, admin, key)
				waitServerPast(t, admin, expireAt+index.ExpirySlack+20)
			})
		}, func(t *testing.T, admin *redis.Client, s *Scanner, g *gateHook, key string) {
			s.Scan(context.WithValue(context.Background(), sweepGate{}, true))
			g.await(t)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			admin := srv.Client(t)
			testkit.SetACL(t, srv, testkit.DocumentedACL(t, aclPassword))
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: aclPassword, DisableIdentity: true})
			t.Cleanup(func() { _ = c.Close() })
			s := indexed(t, c, lifecycleNamespaces[:1])
			const key = "jobs:renewed"
			acquire(t, admin, key, "tok-1", 2*time.Second)
			lifecycleOf(t, s)
			g := tc.gate(admin, key, expiryOf(t, admin, key))
			c.AddHook(g)
			tc.act(t, admin, s, g, key)
			got := lifecycleOf(t, s)["jobs"]
			want := life{acq: 1, renewals: 1, ends: ends(), following: 1}
			if got.counts() != want.counts() || got.following != 1 {
				t.Errorf("jobs: %s following=%v\nwant  %s following=1", got.counts(), got.following, want.counts())
			}
		})
	}
}
