package lockkeys

import (
	"slices"
	"strings"
	"testing"
)

func TestCompanionKeys(t *testing.T) {
	tests := []struct {
		key, fence, writeFence, holder string
		sameSlot                       bool
	}{
		{"scheduler:job:42", "{scheduler:job:42}:fence", "{scheduler:job:42}:writefence", "{scheduler:job:42}:holder", true},
		{"{tenant-a}:job:42", "{tenant-a}:job:42:fence", "{tenant-a}:job:42:writefence", "{tenant-a}:job:42:holder", true},
		{"job:{42}:x", "job:{42}:x:fence", "job:{42}:x:writefence", "job:{42}:x:holder", true},
		{"a{b", "{a{b}:fence", "{a{b}:writefence", "{a{b}:holder", true},
		{"{}job", "{{}job}:fence", "{{}job}:writefence", "{{}job}:holder", false},
		{"a}b", "{a}b}:fence", "{a}b}:writefence", "{a}b}:holder", false},
		{"", "{}:fence", "{}:writefence", "{}:holder", true},
	}
	for _, tc := range tests {
		if got := Fence(tc.key); got != tc.fence {
			t.Errorf("Fence(%q) = %q, want %q", tc.key, got, tc.fence)
		}
		if got := WriteFence(tc.key); got != tc.writeFence {
			t.Errorf("WriteFence(%q) = %q, want %q", tc.key, got, tc.writeFence)
		}
		if got := Holder(tc.key); got != tc.holder {
			t.Errorf("Holder(%q) = %q, want %q", tc.key, got, tc.holder)
		}
		if got := SameSlot(tc.key); got != tc.sameSlot {
			t.Errorf("SameSlot(%q) = %v, want %v", tc.key, got, tc.sameSlot)
		}
	}
}

// TestKindOf: every key Fence, WriteFence and Holder produce has its kind, and the keys a
// lock may be named like a companion are locks.
func TestKindOf(t *testing.T) {
	for _, lock := range []string{"jobs:1", "{jobs}:1", "cordum:wf:run:lock:abc", "", "}", "a}b", "{", "{}", "x{y}z", "w:deploy"} {
		for _, key := range []string{Fence(lock), WriteFence(lock)} {
			if got := KindOf(key); got != FenceCompanion {
				t.Errorf("KindOf(%q) (fence companion of %q) = %v, want FenceCompanion", key, lock, got)
			}
		}
		if got := KindOf(Holder(lock)); got != HolderCompanion {
			t.Errorf("KindOf(%q) (holder key of %q) = %v, want HolderCompanion", Holder(lock), lock, got)
		}
		// LockOf names the lock back, so a companion can be counted under its lock's namespace.
		for _, key := range []string{Fence(lock), WriteFence(lock), Holder(lock)} {
			if _, base, unwrapped := LockOf(key); base != lock && unwrapped != lock {
				t.Errorf("LockOf(%q) = %q, %q; want %q among them", key, base, unwrapped, lock)
			}
		}
	}
	if kind, base, unwrapped := LockOf("jobs:1"); kind != NotCompanion || base != "" || unwrapped != "" {
		t.Errorf("LockOf of a lock = %v, %q, %q", kind, base, unwrapped)
	}
	tests := []struct {
		key  string
		want Kind
	}{
		{"w:deploy:fence", NotCompanion}, // a lock named so: lease would have written {w:deploy}:fence
		{"jobs:1:writefence", NotCompanion},
		{"{w:deploy}:fence", FenceCompanion},
		{"w:deploy:holder", NotCompanion}, // a lock named so: lease would have written {w:deploy}:holder
		{"{jobs}:42:holder", HolderCompanion},
		{"{jobs:42}:holder", HolderCompanion},
		{"{jobs}:1:fence", FenceCompanion},
		{"{jobs}:1:writefence", FenceCompanion},
		{"{}:fence", FenceCompanion}, // Fence("")
		{"{}x:fence", NotCompanion},
		{"fence", NotCompanion},
		{":fence", NotCompanion},
		{"jobs:1", NotCompanion},
	}
	for _, tt := range tests {
		if got := KindOf(tt.key); got != tt.want {
			t.Errorf("KindOf(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// FuzzKindOf checks the converse on arbitrary keys: a key KindOf calls a companion is exactly
// what Fence, WriteFence or Holder makes of the key its shape implies.
func FuzzKindOf(f *testing.F) {
	for _, seed := range []string{"{a}:fence", "a:fence", "{a}b:writefence", "{}}:fence", "{a}}:fence", "{a}:holder"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		produced := false
		for _, suffix := range []string{fenceSuffix, writeFenceSuffix, holderSuffix} {
			base, ok := strings.CutSuffix(key, suffix)
			if !ok {
				continue
			}
			candidates := []string{base}
			if inner, ok := strings.CutPrefix(base, "{"); ok {
				if inner, ok := strings.CutSuffix(inner, "}"); ok {
					candidates = append(candidates, inner)
				}
			}
			for _, lock := range candidates {
				if Fence(lock) == key || WriteFence(lock) == key || Holder(lock) == key {
					produced = true
				}
			}
		}
		if kind, base, unwrapped := LockOf(key); kind != NotCompanion {
			for _, lock := range []string{base, unwrapped} {
				if lock != "" && Fence(lock) != key && WriteFence(lock) != key && Holder(lock) != key {
					t.Errorf("LockOf(%q) names %q, whose companions are not the key", key, lock)
				}
			}
		}
		if got := KindOf(key) != NotCompanion; got != produced {
			t.Errorf("KindOf(%q) is a companion: %v; Fence, WriteFence or Holder produce it: %v", key, got, produced)
		}
	})
}

// SlotTag is what Redis Cluster hashes, and a lock key's companions share it.
func TestSlotTag(t *testing.T) {
	for key, want := range map[string]string{
		"job:42":          "job:42",
		"{job:42}:data":   "job:42",
		"{tenant}:job:42": "tenant",
		"a{b}c{d}":        "b",
		"{}job":           "{}job", // an empty tag is no tag
		"a}b":             "a}b",
	} {
		if got := SlotTag(key); got != want {
			t.Errorf("SlotTag(%q) = %q, want %q", key, got, want)
		}
		if SameSlot(key) && SlotTag(Fence(key)) != SlotTag(key) {
			t.Errorf("Fence(%q) = %q has tag %q, the key %q", key, Fence(key), SlotTag(Fence(key)), SlotTag(key))
		}
	}
}

// TestCompanionsAreNobodyElses: among keys that are not refused (SameSlot, not SharesCompanions,
// not companion-shaped), no two have a companion in common, and no key is another's companion.
func TestCompanionsAreNobodyElses(t *testing.T) {
	candidates := []string{"inv", "{inv}", "{inv}:fence", "{inv}:holder", "{inv}:writefence",
		"inv:fence", "{inv}:lock", "{inv}:lock:fence", "{{inv}}", "{a{b}", "a{b", "{tenant}:job",
		"{tenant}:job:fence", "{tenant}:job:holder", "{}", "a}b", "{a}b}", "x{y}z", "{inv}x"}
	var kept []string
	for _, k := range candidates {
		if SameSlot(k) && !SharesCompanions(k) && KindOf(k) == NotCompanion {
			kept = append(kept, k)
		}
	}
	owner := map[string]string{}
	for _, k := range kept {
		for _, c := range []string{Fence(k), WriteFence(k), Holder(k)} {
			if prev, dup := owner[c]; dup {
				t.Errorf("%q and %q share the companion %q", prev, k, c)
			}
			owner[c] = k
		}
	}
	for _, k := range kept {
		if other, ok := owner[k]; ok {
			t.Errorf("key %q is a companion of %q", k, other)
		}
	}
	for _, k := range []string{"{inv}", "{a{b}", "{}"} {
		if !SharesCompanions(k) {
			t.Errorf("SharesCompanions(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"inv", "{inv}:lock", "{{inv}}", "x{y}z", "{inv}x"} {
		if SharesCompanions(k) {
			t.Errorf("SharesCompanions(%q) = true, want false", k)
		}
	}
	want := []string{"inv", "inv:fence", "{inv}:lock", "{{inv}}", "a{b", "{tenant}:job", "x{y}z", "{inv}x"}
	if !slices.Equal(kept, want) {
		t.Errorf("keys kept = %q, want %q", kept, want)
	}
}
