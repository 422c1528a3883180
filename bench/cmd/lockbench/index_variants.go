package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The index runs as the least-privilege user of docs/exporter.md, so that what it may send is
// what a user's deployment may: without the optional holder grant (+getrange +hscan) it reads no
// holder, and the notifications feed has exactly the channel rules the ACL section prints.

// documentedACL is the rules of the `user lock-exporter …` line of docs/exporter.md, its
// password aside (TestDocumentedACLMatchesDocs keeps the two the same).
var documentedACL = []string{"resetkeys", "resetchannels", "-@all", "+ping", "+scan", "+pttl", "+object|idletime",
	"+type", "+dbsize", "+cluster|slots", "+asking", "+client|tracking", "+info", "+time", "+pexpiretime", "%R~*",
	"(+get", "%R~*:fence", "%R~*:holder)"}

// indexVariant is one way of running the index: its feed, and the grants beside the documented
// line that it is given.
type indexVariant struct {
	mode  string // the row's name
	user  string
	feed  collectors.FeedSource
	extra []string // rules beside documentedACL
}

// lockPattern is the namespace every exporter of the index comparison counts.
const lockPattern = "locks:job:*"

// notifyClasses is the notify-keyspace-events value the notifications feed needs (docs/exporter.md,
// "Feeds: tracking or notifications"): keyspace events of generic, string, hash and expiry commands.
const notifyClasses = "Kg$hx"

var notifyChannels = []string{"__keyspace@0__:locks:job:*", "__keyspace@0__:{locks:job:*"}

var indexVariants = []indexVariant{
	{mode: "index, tracking", user: "lock-exporter", feed: collectors.FeedTracking},
	{mode: "index, tracking + holder read", user: "lock-exporter-holder", feed: collectors.FeedTracking,
		extra: []string{"+getrange", "+hscan"}},
	{mode: "index, notifications", user: "lock-exporter-notify", feed: collectors.FeedNotifications,
		extra: []string{"+psubscribe", "+config|get", "&" + notifyChannels[0], "&" + notifyChannels[1]}},
}

func variantOf(mode string) (indexVariant, bool) {
	for _, v := range indexVariants {
		if v.mode == mode {
			return v, true
		}
	}
	return indexVariant{}, false
}

// benchPassword is the bench users' password on a loopback server the bench starts and stops.
const benchPassword = "lockbench"

// createUser creates v's user on the server.
func (v indexVariant) createUser(ctx context.Context, admin *redis.Client) error {
	args := []any{"ACL", "SETUSER", v.user, "reset", "on", ">" + benchPassword}
	for _, r := range append(append([]string{}, documentedACL...), v.extra...) {
		args = append(args, r)
	}
	return admin.Do(ctx, args...).Err()
}

// setNotifications turns keyspace notifications on (classes) or off ("") on the server: the
// exporter never does, an operator does.
func setNotifications(ctx context.Context, admin *redis.Client, classes string) error {
	return admin.ConfigSet(ctx, "notify-keyspace-events", classes).Err()
}

// attachedIndex is a running index as one variant's user, scraped as lock-exporter scrapes.
type attachedIndex struct {
	v      indexVariant
	client *redis.Client
	s      *collectors.Scanner
}

// attachIndex starts the index of v and waits until it serves from the index: its build (one
// walk) is set-up, not part of what an interval costs. backstopPace is its backstop walk's pace
// (negative: none); the walk starts right after the build, the first of the walks a keyspace
// that takes longer to walk than the rest between walks is read by most of the time.
func attachIndex(ctx context.Context, addr string, admin *redis.Client, v indexVariant, backstopPace int) (*attachedIndex, error) {
	if err := v.prepare(ctx, admin); err != nil {
		return nil, err
	}
	a, err := startIndex(ctx, addr, v, backstopPace)
	if err != nil {
		v.release(ctx, admin)
		return nil, err
	}
	return a, nil
}

// prepare does on the server what an operator does before v's index starts: its user, and the
// notifications setting for that feed.
func (v indexVariant) prepare(ctx context.Context, admin *redis.Client) error {
	if err := v.createUser(ctx, admin); err != nil {
		return fmt.Errorf("ACL SETUSER %s: %w", v.user, err)
	}
	if v.feed == collectors.FeedNotifications {
		return setNotifications(ctx, admin, notifyClasses)
	}
	return nil
}

// release undoes prepare's notifications setting, so that the windows without this index pay
// nothing for it.
func (v indexVariant) release(ctx context.Context, admin *redis.Client) error {
	if v.feed == collectors.FeedNotifications {
		return setNotifications(ctx, admin, "")
	}
	return nil
}

// startIndex starts v's index as its user on a server prepare readied, and waits for it.
func startIndex(ctx context.Context, addr string, v indexVariant, backstopPace int) (*attachedIndex, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Username: v.user, Password: benchPassword, ContextTimeoutEnabled: true,
		MaxRetries: -1, DisableIdentity: true, PoolSize: collectors.ConnectionsPerNode()})
	s, err := collectors.NewScanner(c, collectors.Options{Namespaces: []collectors.Namespace{{Name: "jobs", Pattern: lockPattern}},
		Mode: collectors.ModeAuto, Feed: v.feed, Timeout: 5 * time.Minute, BackstopKeysPerSecond: backstopPace,
		BackstopEvery: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.Close()
		return nil, err
	}
	a := &attachedIndex{v: v, client: c, s: s}
	if err := a.waitForIndex(ctx); err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// indexBuildLimit bounds the wait for an index's build on a loaded machine.
const indexBuildLimit = 10 * time.Minute

func (a *attachedIndex) waitForIndex(ctx context.Context) error {
	deadline := time.Now().Add(indexBuildLimit)
	for {
		ns := a.s.Scan(ctx).Namespaces[0]
		switch {
		case ns.Mode == "index":
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%s: no index after %v: mode %s (%s)", a.v.mode, indexBuildLimit, ns.Mode, ns.ModeReason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (a *attachedIndex) close(ctx context.Context, admin *redis.Client) error {
	a.stop()
	return a.v.release(ctx, admin)
}

// stop ends the index and its connections.
func (a *attachedIndex) stop() {
	a.s.Close()
	a.client.Close()
}

// scrape gathers the exporter's metrics once and checks that the index served them, its
// lifecycle following, and (want ≥ 0) the lock keys it counted.
func (a *attachedIndex) scrape(ctx context.Context, want int) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(a.s.Collector(ctx)); err != nil {
		return err
	}
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("%s: %w", a.v.mode, err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()] += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	switch {
	case got["lock_exporter_lifecycle_following"] != 1:
		return fmt.Errorf("%s: lock_exporter_lifecycle_following %v, want 1", a.v.mode, got["lock_exporter_lifecycle_following"])
	case want >= 0 && got["lock_keys"] != float64(want):
		return fmt.Errorf("%s: lock_keys %v, want %d", a.v.mode, got["lock_keys"], want)
	}
	return nil
}

// idleCPU is Redis's CPU over d with nothing sent but the two INFO reads.
func idleCPU(ctx context.Context, admin *redis.Client, d time.Duration) (time.Duration, error) {
	cpu0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	cpu1, err := testkit.RedisCPU(ctx, admin)
	return cpu1 - cpu0, err
}
