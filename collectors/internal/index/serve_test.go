package index

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// TestClusterMerge: the masters' answers add up as one walk of every master counts; a namespace
// one master cannot serve is walked on that master only and merged with the others' indexes; a
// master still on its first build makes the answer partial.
func TestClusterMerge(t *testing.T) {
	ns := []walk.Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}}
	const topK = 2
	key := func(k string, idle int) walk.KeyInfo {
		return walk.KeyInfo{Key: k, Label: k, Idle: time.Duration(idle) * time.Second}
	}
	indexed := func(r walk.NamespaceResult, age time.Duration) ServedNamespace {
		return ServedNamespace{NamespaceResult: r, Indexed: true, IndexAge: age}
	}
	m1 := Serve{Keyspace: 10, Results: map[int]ServedNamespace{
		0: indexed(walk.NamespaceResult{Namespace: ns[0], Keys: 3, KeysWithoutTTL: 1, FenceKeys: 2, MinTTL: 5 * time.Second, HasTTL: true,
			MaxIdle: 30 * time.Second, HasIdle: true, Stalest: []walk.KeyInfo{key("a:1", 30), key("a:2", 10)}, Complete: true}, 0),
		1: indexed(walk.NamespaceResult{Namespace: ns[1], Keys: 1, Complete: true}, 0),
	}}
	m2 := Serve{Keyspace: 20, Results: map[int]ServedNamespace{
		0: indexed(walk.NamespaceResult{Namespace: ns[0], Keys: 4, MinTTL: 2 * time.Second, HasTTL: true, MaxIdle: 20 * time.Second, HasIdle: true,
			Stalest: []walk.KeyInfo{key("a:3", 20), key("a:4", 1)}, Complete: true}, time.Second),
	}, Walk: 1 << 1, WalkWhy: map[int]string{1: WhyResyncing}}
	m2walk := WalkOf{Mask: 1 << 1, Res: &walk.Result{Up: true, IdleTimeAvailable: true, Keyspace: 20, ScanCalls: 3, KeysScanned: 2,
		Namespaces: []walk.NamespaceResult{{Namespace: ns[1], Keys: 2, KeysWithoutTTL: 1, Complete: true}}}}

	got := MergeServes(ns, topK, []Serve{m1, m2}, []WalkOf{{}, m2walk})
	if got.Walk != 0 || got.Walked[1] != WhyResyncing || len(got.Walked) != 1 || got.Keyspace != 30 || got.Partial ||
		got.ScanCalls != 3 || got.KeysScanned != 2 {
		t.Fatalf("walk %b walked %v keyspace %d partial %v scans %d/%d", got.Walk, got.Walked, got.Keyspace, got.Partial, got.ScanCalls, got.KeysScanned)
	}
	a := got.Results[0]
	if a.Keys != 7 || a.KeysWithoutTTL != 1 || a.FenceKeys != 2 || a.MinTTL != 2*time.Second || a.MaxIdle != 30*time.Second ||
		walkKeysOf(a.Stalest) != "a:1 a:3" || a.IndexAge != time.Second || !a.Complete || !a.Indexed {
		t.Errorf("merged %+v", a)
	}
	if b := got.Results[1]; b.Keys != 3 || b.KeysWithoutTTL != 1 || !b.Complete || !b.Indexed {
		t.Errorf("b, from m1's index and m2's walk: %+v", b)
	}
	cut := m2walk
	cut.Res = &walk.Result{Up: true, IdleTimeAvailable: true, Namespaces: []walk.NamespaceResult{{Namespace: ns[1], Keys: 1}}}
	if b := MergeServes(ns, topK, []Serve{m1, m2}, []WalkOf{{}, cut}).Results[1]; b.Keys != 2 || b.Complete {
		t.Errorf("b with m2's walk cut by the deadline: keys %d complete %v, want a lower bound", b.Keys, b.Complete)
	}

	down := errors.New("no answer")
	if got := MergeServes(ns, topK, []Serve{m1, {Err: down}}, []WalkOf{{}, {}}); got.Err != down {
		t.Errorf("a master that did not answer: err %v", got.Err)
	}

	building := BuildingServe(&walk.Result{Up: true, IdleTimeAvailable: true, Keyspace: 5, Namespaces: []walk.NamespaceResult{
		{Namespace: ns[0], Keys: 2, Stalest: []walk.KeyInfo{key("a:9", 99)}}, {Namespace: ns[1], Keys: 1},
	}})
	p := MergeServes(ns, topK, []Serve{m1, building, m2}, nil)
	if !p.Partial || p.Err != nil || p.Keyspace != 35 || len(p.Results) != 2 {
		t.Fatalf("partial %+v", p)
	}
	if a := p.Results[0]; a.Keys != 9 || walkKeysOf(a.Stalest) != "a:9 a:1" || a.Complete {
		t.Errorf("partial a: %+v", a)
	}
	if b := p.Results[1]; b.Keys != 2 || !errors.Is(b.Err, ErrBuildTookTheDeadline) {
		t.Errorf("partial b (walked by one master): keys %d err %v, want unknown", b.Keys, b.Err)
	}
}

// walkKeysOf is the names of the keys ks, space-separated.
func walkKeysOf(ks []walk.KeyInfo) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Key)
	}
	return strings.Join(names, " ")
}
