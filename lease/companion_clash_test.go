package lease

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// Lock "inv" and lock "{inv}" would have the same companion keys ("{inv}:fence",
// "{inv}:holder"): the second acquisition raised the first holder's fence key, so the rightful
// holder of "inv" was refused its FencedSet as stale, and releasing "inv" deleted the holder
// record of the still-held "{inv}". A namespace that keeps companions refuses "{inv}" instead.
func TestLocksNeverShareCompanionKeys(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "inventory", Policy{TTL: time.Minute, Fencing: true, RecordHolder: true})
	ctx := context.Background()
	bare := uniqueKey(t)
	wrapped := "{" + bare + "}"
	a, err := n.Acquire(ctx, bare)
	if err != nil {
		t.Fatal(err)
	}
	b, errWrapped := n.TryAcquire(ctx, wrapped)
	if b != nil {
		t.Cleanup(func() { _ = b.Release(ctx) })
	}
	if err := n.FencedSet(ctx, bare, a.Fence(), besideLock(bare), "v", 0); err != nil {
		t.Errorf("the rightful holder of %q had its FencedSet refused: %v", bare, err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if b != nil && e.rdb.Exists(ctx, lockkeys.Holder(wrapped)).Val() == 0 {
		t.Errorf("releasing %q deleted the holder record of the still-held %q", bare, wrapped)
	}
	if !errors.Is(errWrapped, ErrInvalidKey) {
		t.Errorf("TryAcquire(%q) beside %q = %v, want ErrInvalidKey", wrapped, bare, errWrapped)
	}
}

// No lock key equals another lock's companion key, whatever the namespace's policy: another
// namespace on the same Redis may fence or record holders. A key that is one hash tag and
// nothing else ("{inv}") is refused only where it would get companions, those of "inv".
func TestCompanionClashingLockKeysAreRefused(t *testing.T) {
	e := newEnv(t, sharedAddr)
	policies := []struct {
		name       string
		p          Policy
		companions bool
	}{
		{"plain", Policy{TTL: time.Minute}, false},
		{"fenced", Policy{TTL: time.Minute, Fencing: true}, true},
		{"holder", Policy{TTL: time.Minute, RecordHolder: true}, true},
	}
	base := fmt.Sprintf("inv%d", keySeq.Add(1))
	keys := []struct {
		key string
		// refused: "always", "with companions" (a namespace that fences or records holders), or
		// "" (never).
		refused string
	}{
		{"{" + base + "}:fence", "always"},
		{"{" + base + "}:holder", "always"},
		{"{" + base + "}:writefence", "always"},
		{"{tenant-" + base + "}:job:fence", "always"}, // the fence key of "{tenant-…}:job"
		{"{" + base + "}", "with companions"},
		{"{a{" + base + "}", "with companions"}, // the companions of "a{…", which has no hash tag
		{base, ""},
		{base + ":fence", ""}, // its own fence key is "{…:fence}:fence"
		{"{" + base + "}:lock", ""},
		{"{{" + base + "}}", ""}, // hash tag "{…": no key without a tag wraps to it
	}
	for _, pc := range policies {
		n := e.namespace(t, pc.name, pc.p)
		for _, kc := range keys {
			l, err := n.TryAcquire(context.Background(), kc.key)
			if l != nil {
				_ = l.Release(context.Background())
			}
			wantRefused := kc.refused == "always" || kc.refused == "with companions" && pc.companions
			if got := errors.Is(err, ErrInvalidKey); got != wantRefused {
				t.Errorf("namespace %s: TryAcquire(%q) = %v, want refused %v", pc.name, kc.key, err, wantRefused)
			}
		}
	}
}

// The fencing guards never write a companion key as data (FencedSet to "{job}:fence" would
// overwrite the lock's own fence key), and a Guard, which keeps a write-fence record per data
// key, refuses a data key whose record would be another key's ("{x}" shares "x"'s).
func TestFencedWritesRefuseCompanionClashingDataKeys(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "writer", Policy{TTL: time.Minute, Fencing: true, RecordHolder: true})
	ctx := context.Background()
	lock := uniqueKey(t)
	l, err := n.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	for _, data := range []string{lockkeys.Fence(lock), lockkeys.Holder(lock), lockkeys.WriteFence(lock)} {
		if err := n.FencedSet(ctx, lock, l.Fence(), data, "v", 0); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("FencedSet of %q under lock %q = %v, want ErrInvalidKey", data, lock, err)
		}
	}
	if err := n.FencedSet(ctx, lock, l.Fence(), besideLock(lock), "v", 0); err != nil {
		t.Errorf("FencedSet beside the lock after the refusals: %v", err)
	}
	g := n.Guard(nil)
	other := fmt.Sprintf("data%d", keySeq.Add(1))
	for _, data := range []string{"{" + other + "}", lockkeys.WriteFence(other), lockkeys.Fence(other)} {
		if err := g.Set(ctx, l.Fence(), data, "v", 0); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Guard.Set of %q = %v, want ErrInvalidKey", data, err)
		}
		if err := g.Claim(ctx, l.Fence(), data); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Guard.Claim of %q = %v, want ErrInvalidKey", data, err)
		}
	}
	if err := g.Set(ctx, l.Fence(), other, "v", 0); err != nil {
		t.Errorf("Guard.Set of %q: %v", other, err)
	}
}
