package index

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/keyspace"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// ResyncNotificationsOff: the keyspace-notifications feed stopped naming every change: CONFIG
// GET shows the setting no longer publishes what the index needs (switched off at run time),
// or the backstop walk corrected keys the feed never named.
const ResyncNotificationsOff = "notifications_off"

// configRecheckEvery is how often a notifications feed re-reads the server's setting: a
// setting switched off publishes nothing, and nothing else would tell.
const configRecheckEvery = time.Second

// notificationSource is a change feed's keyspace-notifications side: the subscription, and the
// events of each lock key since the last drain, in order. Its fields are used under the node's
// syncMu (every ping is), events under the feed's mu.
type notificationSource struct {
	sub *keyspace.Subscriber
	// config re-reads the setting; nil where CONFIG GET was refused (the operator is trusted).
	config    keyspace.ConfigReader
	checkedAt time.Time
	events    map[string][]string
	count     int // events held in events
}

// NewNotificationFeed is a change feed whose source is the keyspace notifications sub receives;
// config re-reads the server's setting, nil where CONFIG GET is refused. clock stamps the
// feed's round trips.
func NewNotificationFeed(sub *keyspace.Subscriber, config keyspace.ConfigReader, admit func(string) bool, clock *ServerClock) *ChangeFeed {
	src := &notificationSource{sub: sub, config: config, events: map[string][]string{}, checkedAt: time.Now()}
	return &ChangeFeed{admit: admit, pending: map[string]int64{}, notes: src, clock: clock}
}

// pingNotifications is Ping for a notifications feed: a round trip on the subscription, the
// events up to it noted, and, every configRecheckEvery, the setting read again. A setting that
// no longer suffices loses the feed (notifications_off).
func (feed *ChangeFeed) pingNotifications(ctx context.Context) error {
	// Redis publishes a keyspace event in the command that makes it, so every event of a write
	// made before the sync's PING arrived precedes its reply; the PING arrived after it was
	// sent, by the server's clock no earlier than earliest says.
	arrived := feed.clock.Earliest(time.Now())
	events, err := feed.notes.sub.Sync(ctx)
	if err != nil {
		return err
	}
	feed.completeAt(arrived)
	feed.mu.Lock()
	for _, ev := range events {
		feed.noteEvent(ev)
	}
	feed.mu.Unlock()
	if !feed.notes.stillOn(ctx) {
		feed.mu.Lock()
		if feed.lost == "" {
			feed.lost = ResyncNotificationsOff
		}
		feed.mu.Unlock()
	}
	return nil
}

// noteEvent queues the keys an event names for a re-read, and keeps a lock key's event in
// order. Past the subscriber's bound of held events the feed is lost. feed.mu is held.
func (feed *ChangeFeed) noteEvent(ev keyspace.Event) {
	feed.name(ev.Key)
	if kind, _, _ := lockkeys.LockOf(ev.Key); kind != lockkeys.NotCompanion || !feed.admit(ev.Key) {
		return
	}
	if feed.notes.count >= keyspace.DefaultMaxPending {
		if feed.lost == "" {
			feed.lost = ResyncConnectionLost
		}
		return
	}
	feed.notes.events[ev.Key] = append(feed.notes.events[ev.Key], ev.Name)
	feed.notes.count++
}

// stillOn re-reads the setting when configRecheckEvery has passed, and reports false when it no
// longer publishes every event the index needs. No answer is not a verdict: the scrape reports
// a Redis that does not answer.
func (src *notificationSource) stillOn(ctx context.Context) bool {
	if src.config == nil || time.Since(src.checkedAt) < configRecheckEvery {
		return true
	}
	src.checkedAt = time.Now()
	support, err := keyspace.Probe(ctx, src.config)
	if errors.Is(err, keyspace.ErrConfigRefused) {
		src.config = nil // revoked: trusted from now on, as if refused from the start
		return true
	}
	return err != nil || support.Sufficient()
}

// TakeEvents returns the lock keys' events noted since the last take.
func (feed *ChangeFeed) TakeEvents() map[string][]string {
	if feed == nil || feed.notes == nil {
		return nil
	}
	feed.mu.Lock()
	defer feed.mu.Unlock()
	events := feed.notes.events
	if len(events) > 0 {
		feed.notes.events, feed.notes.count = map[string][]string{}, 0
	}
	return events
}

// Requeue puts the changed keys back for the next drain, after their re-read failed, with the
// instants their changes came after and the events taken for them (in front of any noted
// since: a drain holds syncMu, and only a drain notes).
func (feed *ChangeFeed) Requeue(changed map[string]int64, events map[string][]string) {
	feed.mu.Lock()
	defer feed.mu.Unlock()
	for k, after := range changed {
		if since, queued := feed.pending[k]; !queued || after < since {
			feed.pending[k] = after // its first change is the older one
		}
	}
	if feed.notes == nil {
		return
	}
	for k, evs := range events {
		feed.notes.events[k] = append(evs, feed.notes.events[k]...)
		feed.notes.count += len(evs)
	}
}

// FromNotifications reports whether the feed is a keyspace-notifications one.
func (feed *ChangeFeed) FromNotifications() bool { return feed != nil && feed.notes != nil }

var _ keyspace.ConfigReader = (*redis.Client)(nil)
