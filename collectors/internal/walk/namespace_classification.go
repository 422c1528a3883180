package walk

import (
	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// Classifier sorts the keys of the one SCAN walk into namespaces on the exporter's side, with the
// server's own glob semantics (internal/glob), and works out what the server can filter before
// the keys reach the exporter.
type Classifier struct {
	namespaces []Namespace
	// Match is the MATCH argument of the walk: LockOrCompanionMatch of the literal prefix every
	// pattern starts with, "" (no MATCH) when they share none.
	Match string
	// StringsOnly is true when every namespace counts string keys only, so SCAN ... TYPE string
	// can drop every other key on the server.
	StringsOnly bool
}

func NewClassifier(namespaces []Namespace) *Classifier {
	c := &Classifier{namespaces: namespaces, StringsOnly: true}
	prefix := ""
	for i, ns := range namespaces {
		lit := LiteralPrefix(ns.Pattern)
		if i == 0 {
			prefix = lit
		} else {
			prefix = CommonPrefix(prefix, lit)
		}
		c.StringsOnly = c.StringsOnly && ns.StringsOnly
	}
	if prefix != "" {
		c.Match = LockOrCompanionMatch(prefix)
	}
	return c
}

// HolderReader returns the test the inspection uses to decide whether to read a key's holder
// record, or nil when no namespace ReadsHolders (then no key pays for it). A key's
// record is read when a namespace that ReadsHolders matches the key and the key can have a
// holder key (lockkeys.SameSlot).
func (c *Classifier) HolderReader() func(key string) bool {
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

// Classify appends to dst the index of every namespace whose pattern matches key.
func (c *Classifier) Classify(key string, dst []int32) []int32 {
	for i, ns := range c.namespaces {
		if glob.ScanMatch(ns.Pattern, key) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// Classified is one SCAN reply sorted into namespaces: keys that match no namespace are dropped,
// and the namespaces of Keys[k] are NS[Off[k]:Off[k+1]].
type Classified struct {
	Keys      []string
	Companion []lockkeys.Kind
	Off       []int32
	NS        []int32
}

// ClassifyCompanion appends to dst the index of every namespace that matches the companion key
// itself or either lock it may belong to (lockkeys.LockOf), so that the fence key
// "{jobs:1}:fence" counts under the pattern "jobs:*" of its lock.
func (c *Classifier) ClassifyCompanion(key, base, unwrapped string, dst []int32) []int32 {
	for i, ns := range c.namespaces {
		if glob.ScanMatch(ns.Pattern, key) ||
			base != "" && glob.ScanMatch(ns.Pattern, base) ||
			unwrapped != "" && glob.ScanMatch(ns.Pattern, unwrapped) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// Sort classifies a SCAN reply into r, reusing r's slices.
func (c *Classifier) Sort(keys []string, r *Classified) {
	r.Keys, r.Companion, r.Off, r.NS = r.Keys[:0], r.Companion[:0], append(r.Off[:0], 0), r.NS[:0]
	for _, key := range keys {
		before := len(r.NS)
		kind, base, unwrapped := lockkeys.LockOf(key)
		if kind == lockkeys.NotCompanion {
			r.NS = c.Classify(key, r.NS)
		} else {
			r.NS = c.ClassifyCompanion(key, base, unwrapped, r.NS)
		}
		if len(r.NS) == before {
			continue
		}
		r.Keys = append(r.Keys, key)
		r.Companion = append(r.Companion, kind)
		r.Off = append(r.Off, int32(len(r.NS)))
	}
}
