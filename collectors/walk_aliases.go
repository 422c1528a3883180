package collectors

import (
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// NoTTL is KeyInfo.TTL for a key without expiry (PTTL -1).
const NoTTL time.Duration = walk.NoTTL

// KeyInfo describes one live lock key. It never carries the key's value (the owner token).
type KeyInfo = walk.KeyInfo

// PrintableKey renders a raw (possibly binary) Redis key as printable, valid UTF-8 that
// redis-cli reads back as the same key between double quotes.
func PrintableKey(key string) string { return walk.PrintableKey(key) }

// KeyLabel is PrintableKey capped at 128 bytes, for the key label; a shortened key keeps its
// head and gets "~" plus a hash of the whole key, so two long keys with the same prefix stay
// distinct.
func KeyLabel(key string) string { return walk.KeyLabel(key) }
