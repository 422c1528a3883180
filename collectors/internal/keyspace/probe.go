package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Setting is the server configuration parameter that chooses which keyspace events Redis
// publishes. The exporter only reads it: choosing what a server publishes is its operator's
// decision (every write publishes a message once it is on).
const Setting = "notify-keyspace-events"

// requiredClasses are the event classes a lock-key index needs, by their letters in Setting:
// g generic commands (DEL, EXPIRE, RENAME, ...), $ strings, h hashes, x expirations. Without any
// of them a lock could change without a message.
const requiredClasses = "g$hx"

// allClasses is what the alias A stands for; Redis reads back "A" whenever all of them are on.
const allClasses = "g$lshzxetd"

// ErrConfigRefused is Probe's error when the server refuses CONFIG GET: an ACL without
// +config|get, or a managed service that renames CONFIG away. Whether notifications are on is
// then unknown.
var ErrConfigRefused = errors.New("CONFIG GET refused")

// Support is what a server's Setting says about the events a lock-key index needs.
type Support struct {
	// Value is the setting as the server returned it.
	Value string
	// Keyspace is true when __keyspace@<db>__ messages are published (K), which name the key
	// in the channel and the event in the message.
	Keyspace bool
	// Missing holds the required classes not published, in the order g, $, h, x.
	Missing string
	// Evictions is true when evictions are published (e): without it an evicted lock reads as
	// gone at its next re-read, with no event saying why.
	Evictions bool
}

// Sufficient reports whether every change to a string or hash lock key is published.
func (s Support) Sufficient() bool { return s.Keyspace && s.Missing == "" }

// Shortfall says in one line what Setting lacks, or "" when it is sufficient.
func (s Support) Shortfall() string {
	var lacks []string
	if !s.Keyspace {
		lacks = append(lacks, "K")
	}
	if s.Missing != "" {
		lacks = append(lacks, s.Missing)
	}
	if len(lacks) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %q lacks %s (needs K and %s, e.g. \"Kg$hxe\" or \"KA\")", Setting, s.Value, strings.Join(lacks, " and "), requiredClasses)
}

// Parse reads a value of Setting as Redis returns it: the classes' letters, A for all of them,
// K and E for the two kinds of channel (only K's carry the key in the channel name).
func Parse(value string) Support {
	classes := value
	if strings.Contains(classes, "A") {
		classes += allClasses
	}
	s := Support{Value: value, Keyspace: strings.Contains(value, "K"), Evictions: strings.Contains(classes, "e")}
	for _, c := range requiredClasses {
		if !strings.ContainsRune(classes, c) {
			s.Missing += string(c)
		}
	}
	return s
}

// ConfigReader is the one command Probe sends.
type ConfigReader interface {
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
}

// Probe reads Setting with CONFIG GET. A refusal by the server is ErrConfigRefused (wrapping
// the reply); other errors (no answer) are returned as they are.
func Probe(ctx context.Context, c ConfigReader) (Support, error) {
	values, err := c.ConfigGet(ctx, Setting).Result()
	var rerr redis.Error
	if errors.As(err, &rerr) && refusedReply(rerr.Error()) {
		return Support{}, fmt.Errorf("%w: %w", ErrConfigRefused, err)
	}
	if err != nil {
		return Support{}, err
	}
	value, ok := values[Setting]
	if !ok {
		return Support{}, fmt.Errorf("%w: the reply has no %s", ErrConfigRefused, Setting)
	}
	return Parse(value), nil
}

// refusedReply reports whether an error reply refuses the command for good (rather than for
// the moment, as LOADING or BUSY do).
func refusedReply(msg string) bool {
	return strings.HasPrefix(msg, "NOPERM ") || strings.HasPrefix(msg, "ERR unknown command") ||
		strings.HasPrefix(msg, "ERR unknown subcommand")
}
