package collectors

import "github.com/lockwatch/lockwatch/collectors/internal/walk"

// PrintableKey renders a raw (possibly binary) Redis key as printable, valid UTF-8 that
// redis-cli reads back as the same key between double quotes.
func PrintableKey(key string) string { return walk.PrintableKey(key) }

// KeyLabel is PrintableKey capped at 128 bytes, for the key label; a shortened key keeps its
// head and gets "~" plus a hash of the whole key, so two long keys with the same prefix stay
// distinct.
func KeyLabel(key string) string { return walk.KeyLabel(key) }
