package lease

import (
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestPolicyDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Policy
		want Policy
	}{
		{"zero", Policy{}, Policy{
			TTL: 30 * time.Second, RenewInterval: 10 * time.Second, RenewTimeout: 2 * time.Second,
			MaxRenewFailures: 3, AcquireTimeout: 2 * time.Second, RetryBackoff: 25 * time.Millisecond,
			ReleaseTimeout: 2 * time.Second, FenceRetention: time.Minute,
		}},
		{"scheduler seed", Policy{TTL: time.Minute, Fencing: true}, Policy{
			TTL: time.Minute, RenewInterval: 20 * time.Second, RenewTimeout: 2 * time.Second,
			MaxRenewFailures: 3, AcquireTimeout: 2 * time.Second, RetryBackoff: 25 * time.Millisecond,
			ReleaseTimeout: 2 * time.Second, Fencing: true, FenceRetention: time.Minute,
		}},
		{"short TTL caps the renew timeout", Policy{TTL: 300 * time.Millisecond}, Policy{
			TTL: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond, RenewTimeout: 100 * time.Millisecond,
			MaxRenewFailures: 3, AcquireTimeout: 2 * time.Second, RetryBackoff: 25 * time.Millisecond,
			ReleaseTimeout: 2 * time.Second, FenceRetention: time.Minute,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("withDefaults() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestPolicyValidation(t *testing.T) {
	tests := []struct {
		p    Policy
		want string
	}{
		{Policy{TTL: time.Microsecond}, "TTL"},
		{Policy{TTL: time.Second, RenewInterval: time.Second}, "RenewInterval"},
		{Policy{RenewInterval: -time.Second}, "RenewInterval"},
		{Policy{RenewTimeout: -1}, "RenewTimeout"},
		{Policy{MaxRenewFailures: -1}, "MaxRenewFailures"},
		{Policy{AcquireTimeout: -1}, "AcquireTimeout"},
		{Policy{RetryBackoff: -1}, "RetryBackoff"},
		{Policy{ReleaseTimeout: -1}, "ReleaseTimeout"},
		{Policy{OnRenewFailure: 7}, "OnRenewFailure"},
		{Policy{ReleaseMode: 7}, "ReleaseMode"},
		// The fence key's and write-fence records' expiries would wrap to a negative PX,
		// refused by Redis on every acquire or Guard write.
		{Policy{TTL: math.MaxInt64, Fencing: true}, "FenceRetention"},
		{Policy{TTL: time.Hour, Fencing: true, FenceRetention: math.MaxInt64 - time.Minute}, "FenceRetention"},
		{Policy{WriteFenceRetention: math.MaxInt64}, "WriteFenceRetention"},
	}
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := New(rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		_, err := c.Declare("ns", tc.p)
		if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Declare with %+v = %v, want ErrInvalidPolicy naming %s", tc.p, err, tc.want)
		}
	}
	if _, err := c.Declare("", Policy{}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("empty namespace name: %v", err)
	}
	if _, err := c.Declare("bad\xff", Policy{}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("invalid UTF-8 namespace name: %v", err)
	}
	n, err := c.Declare("ns", Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if n.name != "ns" || n.Policy().TTL != defaultTTL {
		t.Errorf("name, Policy = %q, %+v", n.name, n.Policy())
	}
	if _, err := c.Declare("ns", Policy{}); !errors.Is(err, ErrAlreadyDeclared) || errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("duplicate namespace: %v, want ErrAlreadyDeclared", err)
	}
}

func TestPolicyStrings(t *testing.T) {
	for v, want := range map[interface{ String() string }]string{
		Abandon: "abandon", Continue: "continue", RenewFailurePolicy(9): "RenewFailurePolicy(9)", RenewFailurePolicy(-1): "RenewFailurePolicy(-1)",
		Explicit: "explicit", HoldUntilExpiry: "hold_until_expiry", ReleaseMode(9): "ReleaseMode(9)",
	} {
		if got := v.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// New warns when go-redis would ignore the library's context deadlines.
func TestNewWarnsWithoutContextTimeouts(t *testing.T) {
	for _, tc := range []struct {
		rdb  redis.UniversalClient
		warn bool
	}{
		{redis.NewClient(&redis.Options{Addr: sharedAddr}), true},
		{redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true}), false},
		{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{sharedAddr}}), true},
		{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{sharedAddr}, ContextTimeoutEnabled: true}), false},
	} {
		var logs testkit.SyncBuffer
		if _, err := New(tc.rdb, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
			t.Fatal(err)
		}
		_ = tc.rdb.Close()
		if got := strings.Contains(logs.String(), "ContextTimeoutEnabled"); got != tc.warn {
			t.Errorf("%T: warned = %v, want %v", tc.rdb, got, tc.warn)
		}
	}
}
