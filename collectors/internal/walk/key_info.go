package walk

import "time"

// NoTTL is KeyInfo.TTL for a key without expiry (PTTL -1).
const NoTTL time.Duration = -1

// KeyInfo is the engine's reading of one live lock key: what the walk and the index keep for the
// top-K lists. It has the fields of collectors.KeyInfo, so that collectors converts a list once
// per scrape, and never carries the key's value (the owner token).
type KeyInfo struct {
	// Key is the raw key name, possibly binary.
	Key string
	// TTL is the remaining time to live, or NoTTL.
	TTL time.Duration
	// Idle is OBJECT IDLETIME (one-second resolution); zero when idle time is unavailable.
	Idle time.Duration
	// Label is KeyLabel of the whole key.
	Label string
	// Cut is true when Key holds only the first MaxKeyLabelLen bytes of a longer key name.
	Cut bool
	// Holder is the value of the key's holder key; "" when none was read.
	Holder string
	// Held is how long the lock has been held, by the server's clock; valid only when HasHeld.
	Held    time.Duration
	HasHeld bool
}
