package lease

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Nil where a caller may pass one by mistake never panics: a nil context is refused with an
// error (Release takes it as context.Background, so the lock is still freed), and a nil *Lease
// (a failed Acquire released before its error was checked) answers Release and Renew with an
// error and its accessors with zero values.
func TestNilArgumentsDoNotPanic(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ns := e.namespace(t, "nils", Policy{TTL: time.Second, Fencing: true})
	var nilCtx context.Context
	calls := map[string]func() error{
		"Acquire":    func() error { _, err := ns.Acquire(nilCtx, "job:1"); return err },
		"TryAcquire": func() error { _, err := ns.TryAcquire(nilCtx, "job:1"); return err },
		"Do":         func() error { return ns.Do(nilCtx, "job:1", func(context.Context, int64) error { return nil }) },
		"FencedSet":  func() error { return ns.FencedSet(nilCtx, "job:1", 1, "{job:1}:data", "v", 0) },
		"Claim":      func() error { return ns.Guard(nil).Claim(nilCtx, 1, "data") },
		"Guard.Set":  func() error { return ns.Guard(nil).Set(nilCtx, 1, "data", "v", 0) },
	}
	calls["Do with a nil fn"] = func() error { return ns.Do(context.Background(), "job:nil-fn", nil) }
	var nl *Lease
	calls["nil Lease Release"] = func() error { return nl.Release(context.Background()) }
	calls["nil Lease Renew"] = func() error { return nl.Renew(context.Background()) }
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s succeeded", name)
			}
		}()
	}
	if nl.Key() != "" || nl.Fence() != 0 || !nl.ValidUntil().IsZero() || nl.Context() == nil {
		t.Error("a nil Lease's accessors are not the zero values")
	}

	key := uniqueKey(t)
	l, err := ns.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Renew or Release with a nil context panicked: %v", r)
			}
		}()
		if err := l.Renew(nilCtx); err == nil {
			t.Error("Renew with a nil context succeeded")
		}
		if err := l.Release(nilCtx); err != nil {
			t.Errorf("Release with a nil context = %v, want it to release", err)
		}
	}()
	if n, _ := e.rdb.Exists(context.Background(), key).Result(); n != 0 {
		t.Error("Release with a nil context left the lock key")
	}
	if err := l.Release(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("second Release = %v, want ErrReleased", err)
	}
}
