package observe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A negative GiveUpAfter or MaxTracked is refused by New. A negative MaxTracked used to be
// accepted and track nothing: every lock on a real server went uncounted in lock_held and the
// hold histogram, silently.
func TestNewRefusesNegativeOptions(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	nss := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	for _, opts := range []Options{{MaxTracked: -1}, {GiveUpAfter: -time.Second}} {
		reg := prometheus.NewRegistry()
		opts.Registerer, opts.Namespaces = reg, nss
		obs, err := New(opts)
		if err == nil {
			rdb.AddHook(obs.Hook())
			if err := rdb.SetNX(context.Background(), "jobs:1", "secret-value-opts", 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			t.Fatalf("New(%+v) accepted; lock_held after an acquire = %v", opts, value(t, reg, "lock_held", "jobs", ""))
		}
		if !errors.Is(err, ErrBadOption) {
			t.Errorf("New(%+v) = %v, want ErrBadOption", opts, err)
		}
	}
}
