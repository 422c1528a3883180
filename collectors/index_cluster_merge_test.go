package collectors

import (
	"errors"
	"testing"
	"time"
)

// TestClusterMerge: the masters' answers add up as one walk of every master counts; a namespace
// one master cannot serve is walked; a master still on its first build makes the answer partial.
func TestClusterMerge(t *testing.T) {
	ns := []Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}}
	ci := &clusterIndex{s: &Scanner{opts: Options{TopK: 2}}, namespaces: ns}
	key := func(k string, idle int) KeyInfo {
		return KeyInfo{Key: k, Label: k, Idle: time.Duration(idle) * time.Second}
	}
	m1 := indexServe{keyspace: 10, results: map[int]NamespaceResult{
		0: {Namespace: ns[0], Keys: 3, KeysWithoutTTL: 1, FenceKeys: 2, MinTTL: 5 * time.Second, HasTTL: true,
			MaxIdle: 30 * time.Second, HasIdle: true, Stalest: []KeyInfo{key("a:1", 30), key("a:2", 10)}, Complete: true, Indexed: true},
		1: {Namespace: ns[1], Keys: 1, Complete: true, Indexed: true},
	}}
	m2 := indexServe{keyspace: 20, results: map[int]NamespaceResult{
		0: {Namespace: ns[0], Keys: 4, MinTTL: 2 * time.Second, HasTTL: true, MaxIdle: 20 * time.Second, HasIdle: true,
			Stalest: []KeyInfo{key("a:3", 20), key("a:4", 1)}, Complete: true, Indexed: true, IndexAge: time.Second},
	}, walk: 1 << 1, walkWhy: map[int]string{1: reasonResyncing}}

	got := ci.merge([]indexServe{m1, m2})
	if got.walk != 1<<1 || got.walkWhy[1] != reasonResyncing || got.keyspace != 30 || got.partial != nil {
		t.Fatalf("walk %b %v keyspace %d partial %v", got.walk, got.walkWhy, got.keyspace, got.partial)
	}
	a := got.results[0]
	if a.Keys != 7 || a.KeysWithoutTTL != 1 || a.FenceKeys != 2 || a.MinTTL != 2*time.Second || a.MaxIdle != 30*time.Second ||
		keysOf(a.Stalest) != "a:1 a:3" || a.IndexAge != time.Second || !a.Complete {
		t.Errorf("merged %+v", a)
	}
	if _, served := got.results[1]; served {
		t.Error("a namespace one master walks is served from the others' indexes")
	}

	down := errors.New("no answer")
	if got := ci.merge([]indexServe{m1, {err: down}}); got.err != down {
		t.Errorf("a master that did not answer: err %v", got.err)
	}

	building := indexServe{partial: &Result{Up: true, IdleTimeAvailable: true, Keyspace: 5, Namespaces: []NamespaceResult{
		{Namespace: ns[0], Keys: 2, Stalest: []KeyInfo{key("a:9", 99)}}, {Namespace: ns[1], Keys: 1},
	}}}
	got = ci.merge([]indexServe{m1, building, m2})
	p := got.partial
	if p == nil || !p.Up || p.Keyspace != 35 || len(p.Namespaces) != 2 {
		t.Fatalf("partial %+v", p)
	}
	if a := p.Namespaces[0]; a.Keys != 9 || keysOf(a.Stalest) != "a:9 a:1" || a.Complete {
		t.Errorf("partial a: %+v", a)
	}
	if b := p.Namespaces[1]; b.Keys != 2 || !errors.Is(b.Err, errBuildTookTheDeadline) {
		t.Errorf("partial b (walked by one master): keys %d err %v, want unknown", b.Keys, b.Err)
	}
}
