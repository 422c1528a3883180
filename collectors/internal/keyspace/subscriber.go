package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Event is one keyspace notification: the key, and the event as Redis names it ("set", "del",
// "expire", "expired", "evicted", "hset", "rename_from", "rename_to", ...).
type Event struct {
	Key  string
	Name string
}

// Sentinel errors of a Subscriber.
var (
	// ErrLost: the subscription ended (the connection dropped or was killed, or the pending
	// events passed their bound), so messages were lost. The subscriber stays lost.
	ErrLost = errors.New("keyspace subscription lost")
	// ErrSubscribeRefused: the server answered PSUBSCRIBE with an error (an ACL without the
	// &__keyspace@<db>__:<prefix>* channel rule or +psubscribe).
	ErrSubscribeRefused = errors.New("keyspace subscription refused")
)

// DefaultMaxPending bounds the events a Subscriber holds between two Syncs; past it the
// subscriber is lost, as a tracking connection whose output buffer passes the server's limit.
const DefaultMaxPending = 1 << 20

// subscribeTimeout bounds the wait for PSUBSCRIBE's confirmations when the caller's context has
// no deadline.
const subscribeTimeout = 5 * time.Second

// Pattern is the PSUBSCRIBE pattern of the keyspace events of keys under prefix in database db.
// Glob characters in the prefix are escaped, so the pattern matches the prefix literally. An
// ACL grants it only by a channel rule of exactly this text: Redis compares a PSUBSCRIBE
// pattern with the user's &rules as a string, not as a glob.
func Pattern(db int, prefix string) string {
	var b strings.Builder
	b.WriteString(channelPrefix(db))
	for _, r := range prefix {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('*')
	return b.String()
}

// ChannelRules are the ACL channel rules (&pattern) that grant a subscription to the keyspace
// events of prefixes in database db: one per prefix, each the exact text Subscribe sends.
func ChannelRules(db int, prefixes []string) []string {
	rules := make([]string, len(prefixes))
	for i, p := range prefixes {
		rules[i] = "&" + Pattern(db, p)
	}
	return rules
}

func channelPrefix(db int) string { return "__keyspace@" + strconv.Itoa(db) + "__:" }

// Subscriber receives the keyspace events of the keys under some prefixes on a connection of
// its own, reads them as they come (so the server's output buffer for it stays small), and
// keeps them in order until Sync hands them over.
type Subscriber struct {
	client     *redis.Client
	pubsub     *redis.PubSub
	channel    string // the channels' common prefix, __keyspace@<db>__:
	maxPending int
	done       chan struct{}
	cancel     context.CancelFunc

	mu      sync.Mutex
	events  []Event
	waiters map[string]chan struct{} // by PING payload: closed when its pong arrives
	seq     uint64
	lost    error
	lostCh  chan struct{} // closed when lost is set
}

// Subscribe opens a connection with opts (address, credentials, TLS and database of the
// caller's client) and subscribes to the keyspace events of the keys under prefixes. It returns
// once the server confirmed every pattern; a refusal is ErrSubscribeRefused.
func Subscribe(ctx context.Context, opts *redis.Options, prefixes []string, maxPending int) (*Subscriber, error) {
	o := *opts
	o.Protocol = 2 // pub/sub replies as RESP2 arrays: go-redis reads pongs and messages alike
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns = 1, 0, 1
	o.MaxRetries = -1
	o.OnConnect = nil
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if maxPending <= 0 {
		maxPending = DefaultMaxPending
	}
	s := &Subscriber{
		client: redis.NewClient(&o), channel: channelPrefix(o.DB), maxPending: maxPending,
		done: make(chan struct{}), waiters: map[string]chan struct{}{}, lostCh: make(chan struct{}),
	}
	s.pubsub = s.client.PSubscribe(ctx)
	patterns := make([]string, len(prefixes))
	for i, p := range prefixes {
		patterns[i] = Pattern(o.DB, p)
	}
	if err := s.confirm(ctx, patterns); err != nil {
		s.closeConn()
		return nil, err
	}
	var rctx context.Context
	rctx, s.cancel = context.WithCancel(context.Background())
	go s.read(rctx)
	return s, nil
}

// confirm sends PSUBSCRIBE and reads one confirmation per pattern.
func (s *Subscriber) confirm(ctx context.Context, patterns []string) error {
	if err := s.pubsub.PSubscribe(ctx, patterns...); err != nil {
		return err
	}
	wait := subscribeTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	for range patterns {
		msg, err := s.pubsub.ReceiveTimeout(ctx, wait)
		var rerr redis.Error
		if errors.As(err, &rerr) {
			return fmt.Errorf("%w: %w", ErrSubscribeRefused, err)
		}
		if err != nil {
			return err
		}
		if sub, ok := msg.(*redis.Subscription); !ok || sub.Kind != "psubscribe" {
			return fmt.Errorf("keyspace subscription: unexpected reply %v to PSUBSCRIBE", msg)
		}
	}
	return nil
}

// read receives until the connection fails or the subscriber closes. It never lets go-redis
// carry on over a new connection: messages sent in between would be missing without a word.
func (s *Subscriber) read(ctx context.Context) {
	defer close(s.done)
	for {
		msg, err := s.pubsub.Receive(ctx)
		if err != nil {
			s.fail(err)
			return
		}
		switch m := msg.(type) {
		case *redis.Message:
			s.add(m)
		case *redis.Pong:
			s.answer(m.Payload)
		case *redis.Subscription:
			// A confirmation now means go-redis subscribed again on a new connection.
			s.fail(fmt.Errorf("subscribed again on a new connection: %s", m.Channel))
			return
		}
	}
}

// add keeps one message's event; past maxPending the subscriber is lost.
func (s *Subscriber) add(m *redis.Message) {
	key, ok := strings.CutPrefix(m.Channel, s.channel)
	if !ok {
		return
	}
	s.mu.Lock()
	if len(s.events) >= s.maxPending {
		s.mu.Unlock()
		s.fail(fmt.Errorf("more than %d events pending", s.maxPending))
		return
	}
	s.events = append(s.events, Event{Key: key, Name: m.Payload})
	s.mu.Unlock()
}

func (s *Subscriber) answer(payload string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.waiters[payload]; ok {
		close(w)
		delete(s.waiters, payload)
	}
}

// fail makes the subscriber lost, for good.
func (s *Subscriber) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = fmt.Errorf("%w: %w", ErrLost, err)
		close(s.lostCh)
	}
}

// Sync runs a round trip on the subscribed connection (a PING, answered after every message
// published to it before) and returns every event received until the answer, in the order
// Redis published them. Its error is ErrLost once the subscription ended; the context's error
// when ctx ended first, after which the subscriber is intact and the events stay pending.
func (s *Subscriber) Sync(ctx context.Context) ([]Event, error) {
	s.mu.Lock()
	if s.lost != nil {
		defer s.mu.Unlock()
		return nil, s.lost
	}
	s.seq++
	token := "lockwatch-sync-" + strconv.FormatUint(s.seq, 10)
	answered := make(chan struct{})
	s.waiters[token] = answered
	s.mu.Unlock()
	if err := s.pubsub.Ping(ctx, token); err != nil {
		s.fail(err)
	}
	select {
	case <-answered:
	case <-s.lostCh:
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.waiters, token)
		s.mu.Unlock()
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != nil {
		return nil, s.lost
	}
	events := s.events
	s.events = nil
	return events, nil
}

// Close ends the subscription and waits for the reader to stop.
func (s *Subscriber) Close() {
	s.cancel()
	s.closeConn()
	<-s.done
}

func (s *Subscriber) closeConn() {
	_ = s.pubsub.Close()
	_ = s.client.Close()
}
