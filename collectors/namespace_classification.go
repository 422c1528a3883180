package collectors

import (
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// classifier sorts the keys of the one SCAN walk into namespaces on the exporter's side, with the
// server's own glob semantics (internal/glob), and works out what the server can filter before
// the keys reach the exporter.
type classifier struct {
	namespaces []walk.Namespace
	// match is the MATCH argument of the walk: lockOrCompanionMatch of the literal prefix every
	// pattern starts with, "" (no MATCH) when they share none.
	match string
	// stringsOnly is true when every namespace counts string keys only, so SCAN ... TYPE string
	// can drop every other key on the server.
	stringsOnly bool
}

func newClassifier(namespaces []walk.Namespace) *classifier {
	c := &classifier{namespaces: namespaces, stringsOnly: true}
	prefix := ""
	for i, ns := range namespaces {
		lit := walk.LiteralPrefix(ns.Pattern)
		if i == 0 {
			prefix = lit
		} else {
			prefix = walk.CommonPrefix(prefix, lit)
		}
		c.stringsOnly = c.stringsOnly && ns.StringsOnly
	}
	if prefix != "" {
		c.match = walk.LockOrCompanionMatch(prefix)
	}
	return c
}

// holderReader returns the test the inspection uses to decide whether to read a key's holder
// record, or nil when no namespace declares ExpectedMaxHold (then no key pays for it). A key's
// record is read when a namespace that declares one matches the key and the key can have a
// holder key (lockkeys.SameSlot).
func (c *classifier) holderReader() func(key string) bool {
	var patterns []string
	for _, ns := range c.namespaces {
		if ns.ReadsHolders {
			patterns = append(patterns, ns.Pattern)
		}
	}
	if len(patterns) == 0 {
		return nil
	}
	return func(key string) bool {
		if !lockkeys.SameSlot(key) {
			return false
		}
		for _, p := range patterns {
			if glob.ScanMatch(p, key) {
				return true
			}
		}
		return false
	}
}

// classify appends to dst the index of every namespace whose pattern matches key.
func (c *classifier) classify(key string, dst []int32) []int32 {
	for i, ns := range c.namespaces {
		if glob.ScanMatch(ns.Pattern, key) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// classified is one SCAN reply sorted into namespaces: keys that match no namespace are dropped,
// and the namespaces of keys[k] are ns[off[k]:off[k+1]].
type classified struct {
	keys      []string
	companion []lockkeys.Kind
	off       []int32
	ns        []int32
}

// classifyCompanion appends to dst the index of every namespace that matches the companion key
// itself or either lock it may belong to (lockkeys.LockOf), so that the fence key
// "{jobs:1}:fence" counts under the pattern "jobs:*" of its lock.
func (c *classifier) classifyCompanion(key, base, unwrapped string, dst []int32) []int32 {
	for i, ns := range c.namespaces {
		if glob.ScanMatch(ns.Pattern, key) ||
			base != "" && glob.ScanMatch(ns.Pattern, base) ||
			unwrapped != "" && glob.ScanMatch(ns.Pattern, unwrapped) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// sort classifies a SCAN reply into r, reusing r's slices.
func (c *classifier) sort(keys []string, r *classified) {
	r.keys, r.companion, r.off, r.ns = r.keys[:0], r.companion[:0], append(r.off[:0], 0), r.ns[:0]
	for _, key := range keys {
		before := len(r.ns)
		kind, base, unwrapped := lockkeys.LockOf(key)
		if kind == lockkeys.NotCompanion {
			r.ns = c.classify(key, r.ns)
		} else {
			r.ns = c.classifyCompanion(key, base, unwrapped, r.ns)
		}
		if len(r.ns) == before {
			continue
		}
		r.keys = append(r.keys, key)
		r.companion = append(r.companion, kind)
		r.off = append(r.off, int32(len(r.ns)))
	}
}
