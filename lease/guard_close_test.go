package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// A Guard belongs to its Client: after Close its claims and writes fail with ErrClosed, as
// FencedSet's and every other command do, on the lock's Redis (nil) and on another client alike.
func TestGuardAfterClose(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ns := e.namespace(t, "guard-closed", Policy{TTL: time.Second, Fencing: true})
	key := uniqueKey(t)
	l, err := ns.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	data := key + ":data"
	for name, g := range map[string]*Guard{"lock's Redis": ns.Guard(nil), "another client": ns.Guard(e.rdb)} {
		if err := g.Claim(context.Background(), l.Fence(), data); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Claim after Close = %v, want ErrClosed", name, err)
		}
		if err := g.Set(context.Background(), l.Fence(), data, "v", 0); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Set after Close = %v, want ErrClosed", name, err)
		}
	}
	if err := ns.FencedSet(context.Background(), key, l.Fence(), "{"+key+"}:data", "v", 0); !errors.Is(err, ErrClosed) {
		t.Errorf("FencedSet after Close = %v, want ErrClosed", err)
	}
	if n, _ := e.rdb.Exists(context.Background(), data, lockkeys.WriteFence(data)).Result(); n != 0 {
		t.Errorf("%d keys written after Close", n)
	}
	e.wantMetrics(t, "guard-closed", map[string]float64{"lock_fenced_writes_total/applied": 0, "lock_fenced_writes_total/rejected": 0})
}
