package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/redis/go-redis/v9/push"
)

// TrackingRefusedError wraps the server's refusal of the change feed: HELLO 3 or CLIENT TRACKING
// answered with an error (Redis before 6, a proxy, an ACL without the grants), or a connection
// that did not negotiate RESP3. The node's namespaces then go back to the walk, for good.
// Replies after which a new connection may succeed (TransientReply) are not refusals.
type TrackingRefusedError struct{ Err error }

func (e *TrackingRefusedError) Error() string { return "lock-key index refused: " + e.Err.Error() }
func (e *TrackingRefusedError) Unwrap() error { return e.Err }

// Resync reasons: the reason label of lock_exporter_index_resyncs_total.
const (
	ResyncConnectionLost = "connection_lost"
	ResyncFlush          = "flush"
	ResyncRedirectBroken = "redirect_broken"
	ResyncRestart        = "run_id_changed"
	ResyncRole           = "role_changed"
	ResyncSwapDB         = "swapdb"
	// INFO commandstats' counts were zeroed (CONFIG RESETSTAT): a SWAPDB or a flush may
	// hide behind it.
	ResyncStatsReset = "stats_reset"
	// Redis Cluster: a re-read was redirected (a slot is migrating) or the slots a master
	// serves changed: resync that master. The set of masters changed (a failover, a master
	// added or removed): start or stop the masters' indexes.
	ResyncSlotsMoved = "slots_moved"
	ResyncTopology   = "topology_changed"
	// A namespace walked for the key budget came back under it: the index is rebuilt with it.
	ResyncKeyBudget = "key_budget"
)

// ChangeFeed is one node's RESP3 tracking connection in broadcasting mode: Redis pushes an
// "invalidate" message naming every key under the prefixes that is written, expires, is evicted
// or renamed, in any database, and a null one when a database is flushed. go-redis reads pushes
// only while the connection runs a command, so the owner must keep calling Ping (the node's feed
// loop does, every FeedInterval): an unread feed grows the server's output buffer for this
// client until the server drops it.
type ChangeFeed struct {
	client *redis.Client
	conn   *redis.Conn
	// admit filters the pushed names: tracking ignores the database number and ACL key
	// patterns, so the feed names keys of every database, and keys under a prefix that no
	// pattern matches. What passes is re-read in the configured database, which settles it.
	admit func(key string) bool
	// notes, when set, is the feed's source instead of client tracking (feed_notifications.go):
	// client and conn are then nil.
	notes *notificationSource

	// clock, on a notifications feed, stamps its round trips (a subscription cannot run TIME).
	clock *ServerClock

	mu sync.Mutex
	// pending holds each key named since the last take, with the instant (server ms) its first
	// naming came after: the feed's completeTo when that naming arrived.
	pending map[string]int64
	lost    string // a resync reason the pushes gave (flush, redirect_broken), "" when none
	// completeTo (server ms): every change the server made before it has been named by the
	// round trips so far (0: not yet known); see completeAt.
	completeTo int64
	// namedBy (server ms): every change named so far had happened by then, by the server's own
	// clock: the TIME of the latest round trip on a tracking feed, since a write's invalidation
	// that arrives before TIME's reply was sent by an earlier turn of the event loop. 0 on a
	// notifications feed, whose round trip (PING) reads no clock.
	namedBy int64
}

// OpenChangeFeed dials a dedicated connection with opts (the scan client's, so the same
// address, credentials, TLS and Sentinel master), negotiates RESP3 and turns tracking on.
func OpenChangeFeed(ctx context.Context, opts *redis.Options, prefixes []string, admit func(string) bool) (*ChangeFeed, error) {
	o := *opts
	o.Protocol = 3
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns = 1, 0, 1
	o.MaxRetries = -1 // a retry would run on a new connection, without tracking
	// The caller's context bounds each round trip (feedCommandTimeout, or the scrape's
	// deadline), however many pushes precede the reply.
	o.ContextTimeoutEnabled = true
	o.PushNotificationProcessor = nil
	o.OnConnect = nil
	// Its own settings rather than a copy of the client's: go-redis writes those, under a lock
	// of its own, when Redis refuses the handshake on a new connection (Redis before 8), and
	// NewClient would read them beside that write. The feed's one connection wants no
	// maintenance notifications anyway.
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	feed := &ChangeFeed{client: redis.NewClient(&o), admit: admit, pending: map[string]int64{}}
	for _, name := range []string{"invalidate", "tracking-redir-broken"} {
		if err := feed.client.RegisterPushNotificationHandler(name, feed, true); err != nil {
			feed.Close()
			return nil, err
		}
	}
	feed.conn = feed.client.Conn()
	if err := feed.start(ctx, prefixes); err != nil {
		feed.Close()
		return nil, err
	}
	return feed, nil
}

// start checks that RESP3 was really negotiated (go-redis falls back to RESP2 without a word
// when HELLO 3 is refused, and RESP2 carries no pushes) and turns tracking on.
func (feed *ChangeFeed) start(ctx context.Context, prefixes []string) error {
	hello, err := feed.conn.Do(ctx, "HELLO", "3").Result()
	if err != nil {
		return Refusal(err)
	}
	if proto := helloProto(hello); fmt.Sprint(proto) != "3" {
		return &TrackingRefusedError{fmt.Errorf("HELLO 3 negotiated protocol %v", proto)}
	}
	args := []any{"CLIENT", "TRACKING", "ON", "BCAST"}
	for _, p := range prefixes {
		args = append(args, "PREFIX", p)
	}
	if err := feed.conn.Do(ctx, args...).Err(); err != nil {
		return Refusal(err)
	}
	return nil
}

// Refusal tells a server's error reply (a refusal: the walk takes over) from a connection error
// (Redis down: try again later). Error replies that say the server cannot serve this client
// yet, rather than that it does not do tracking, are not refusals either: the credentials
// (WRONGPASS, NOAUTH: a password file rotated late, an ACL user created after the exporter),
// a dataset still loading, a busy script, a replica without its master, a full client table.
// Taken for refusals, they sent the namespaces to the walk until a restart.
func Refusal(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) && !TransientReply(rerr.Error()) {
		return &TrackingRefusedError{err}
	}
	return err
}

// RefusedGrant wraps, as a refusal, an error reply to one of the other commands the index needs
// (INFO, TIME, PEXPIRETIME) that no retry changes: NOPERM (an ACL without the grant) or an
// unknown command (renamed away). Retried, the builds failed for ever, silently; the
// namespaces now go back to the walk with one line that names the command. Other errors pass.
func RefusedGrant(err error) error {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return err
	}
	if msg := rerr.Error(); strings.HasPrefix(msg, "NOPERM ") || strings.HasPrefix(msg, "ERR unknown command") {
		return &TrackingRefusedError{err}
	}
	return err
}

// transientReplies are the error replies (by their first word, or their whole start) after
// which a new connection may succeed.
var transientReplies = []string{
	"WRONGPASS ", "NOAUTH ", "LOADING ", "BUSY ", "MASTERDOWN ", "TRYAGAIN ", "CLUSTERDOWN ",
	"ERR max number of clients reached",
	"ERR invalid password",                         // Redis before 6
	"ERR Client sent AUTH, but no password is set", // Redis before 6
	"ERR AUTH <password> called without any password configured",
}

func TransientReply(msg string) bool {
	for _, p := range transientReplies {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func helloProto(reply any) any {
	switch m := reply.(type) {
	case map[any]any:
		return m["proto"]
	case map[string]any:
		return m["proto"]
	case []any: // a RESP2 reply: a flat list of names and values
		for i := 0; i+1 < len(m); i += 2 {
			if m[i] == "proto" {
				return m[i+1]
			}
		}
	}
	return nil
}

// HandlePushNotification receives the feed's pushes, on the goroutine running Ping.
func (feed *ChangeFeed) HandlePushNotification(_ context.Context, _ push.NotificationHandlerContext, n []any) error {
	if len(n) == 0 {
		return nil
	}
	feed.mu.Lock()
	defer feed.mu.Unlock()
	if n[0] == "tracking-redir-broken" {
		feed.lost = ResyncRedirectBroken
		return nil
	}
	if len(n) < 2 || n[1] == nil {
		feed.lost = ResyncFlush // FLUSHDB or FLUSHALL, of any database
		return nil
	}
	keys, _ := n[1].([]any)
	for _, k := range keys {
		key, ok := k.(string)
		if !ok {
			continue
		}
		feed.name(key)
	}
	return nil
}

// name queues key, and a holder key's lock for its hold age, for a re-read, stamped with the
// instant its change came after if it is the first naming since the last take. feed.mu is held.
func (feed *ChangeFeed) name(key string) {
	for _, key := range feedKeys(key) {
		if _, queued := feed.pending[key]; !queued && feed.admit(key) {
			feed.pending[key] = feed.completeTo
		}
	}
}

// completeAt records that the round trip just answered was received by the server at or after
// arrived (server ms): every change made before that has been named by now, and a naming that
// arrives later is of a change made after it. Not the round trip's TIME itself: Redis sends a
// tracking invalidation when its event loop goes to sleep, after the replies of every command
// that loop ran, so a write that loop ran before the TIME is named after TIME's reply. That
// loop began once the TIME had arrived: such a write, and every later one, came after arrived.
// A slower round trip can bound its arrival below an earlier one's, which still holds: the
// instant never moves back.
func (feed *ChangeFeed) completeAt(arrived int64) {
	feed.mu.Lock()
	defer feed.mu.Unlock()
	feed.completeTo = max(feed.completeTo, arrived)
}

// Complete is the instant (server ms) up to which every change has been named by the round
// trips so far; 0 when not yet known.
func (feed *ChangeFeed) Complete() int64 {
	feed.mu.Lock()
	defer feed.mu.Unlock()
	return feed.completeTo
}

// Ping runs one round trip on the tracking connection: every push the server sent before its
// reply has been handled when it returns. An error means the connection is gone, and with it
// tracking (a new connection would have none): the node must resync. The round trip is a TIME,
// which the index needs granted anyway, not a PING: an ACL may leave PING out (the documented
// one calls it optional), and a refused round trip reads as a lost feed, at every build.
func (feed *ChangeFeed) Ping(ctx context.Context) error {
	if feed.notes != nil {
		return feed.pingNotifications(ctx)
	}
	sent := time.Now()
	at, err := feed.conn.Time(ctx).Result()
	if err != nil {
		return err
	}
	// The TIME arrived no earlier than its reading less the round trip: both clocks run at
	// one rate over it, and neither's offset plays a part.
	feed.completeAt(at.UnixMilli() - ceilMillis(time.Since(sent)))
	feed.mu.Lock()
	feed.namedBy = max(feed.namedBy, at.UnixMilli())
	feed.mu.Unlock()
	return nil
}

// ceilMillis is d in whole milliseconds, rounded up.
func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// Take returns the keys named since the last take, each with the instant its first change
// since came after (see name), the instant by which they had all changed (namedBy; 0 when
// unknown), and the resync reason a push gave.
func (feed *ChangeFeed) Take() (changed map[string]int64, by int64, lost string) {
	feed.mu.Lock()
	defer feed.mu.Unlock()
	changed = feed.pending
	feed.pending = make(map[string]int64, len(changed))
	return changed, feed.namedBy, feed.lost
}

func (feed *ChangeFeed) Close() {
	if feed.notes != nil {
		feed.notes.sub.Close()
	}
	if feed.conn != nil {
		_ = feed.conn.Close()
	}
	if feed.client != nil {
		_ = feed.client.Close()
	}
}

// feedKeys is the keys to re-read for a key the change feed named: the key itself, except for a
// holder key, which is never indexed: its lock is re-read instead, with its holder record, so
// that a new acquisition time reaches the index even when only the holder key was written. A
// holder key names one or two possible locks (lockkeys.LockOf); a lock that does not exist
// reads as gone, which changes nothing.
func feedKeys(key string) []string {
	kind, base, unwrapped := lockkeys.LockOf(key)
	if kind != lockkeys.HolderCompanion {
		return []string{key}
	}
	var locks []string
	for _, l := range []string{base, unwrapped} {
		if l != "" {
			locks = append(locks, l)
		}
	}
	return locks
}
