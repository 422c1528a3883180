package index

import "github.com/lockwatch/lockwatch/collectors/internal/lifecycle"

// Entry is one indexed key: 56 bytes beside its name. Times are server milliseconds.
type Entry struct {
	ExpireAt int64  // server ms; 0: no expiry
	Touched  int64  // server ms of the last touch as of the last read (read time − OBJECT IDLETIME)
	Acquired int64  // server ms of the acquisition in the lock's holder record; 0: none read
	Mask     uint64 // bit b: indexed namespace b's pattern matches the key
	// The hold's lifecycle: when the change feed saw it begin (server ms; 0: before the index
	// followed the key), a hash of its holder (0: not read), and whether it ended when its
	// expiry passed, Redis not having reclaimed the key yet.
	Began  int64
	Holder uint64
	Epoch  uint32 // the backstop walk's epoch when written
	Type   uint8  // the value's type code (the index's own)
	Fence  bool   // a lease fence or write-fence key: counted apart, read for its expiry alone
	Ended  bool
}

// WithHold stores h's state in e.
func (e *Entry) WithHold(h lifecycle.Hold) {
	e.Began, e.Holder, e.Ended = h.Began, h.Holder, h.Ended
}

// HoldOf is the lifecycle state entry e keeps (had: the index holds the key).
func HoldOf(e Entry, had bool) lifecycle.Hold {
	if !had || e.Fence {
		return lifecycle.Hold{}
	}
	return lifecycle.Hold{Present: true, Ended: e.Ended, Began: e.Began, ExpireAt: e.ExpireAt, Holder: e.Holder}
}

// KeepHold carries the hold of old into e, a new reading of the same key by a build or a
// backstop walk: neither begins nor ends a hold. The end by expiry stands while the expiry does.
func (e *Entry) KeepHold(old Entry) {
	e.Began, e.Holder = old.Began, old.Holder
	e.Ended = old.Ended && old.ExpireAt == e.ExpireAt
}
