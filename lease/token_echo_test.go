package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A server that does not offer EVALSHA under that name (renamed, as hardened configurations
// and some proxies do) answers "ERR unknown command 'evalsha', with args beginning with: 'sha'
// '1' 'key' '<token>' …": the reply quotes the arguments, and the token is one of them. No
// error the library returns and no line it logs may carry the token, whole or cut (Redis cuts
// the quotation at 128 bytes, which can fall inside the token).
func TestTokenNotEchoedByRedisErrorReplies(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--rename-command", "EVALSHA", "evalsha_renamed"))
	longKey := "job:" + strings.Repeat("k", 62) // its token is cut in the quotation
	for _, tc := range []struct {
		name string
		p    Policy
		keys []string
	}{
		{"set nx, renew and release by script", Policy{TTL: 300 * time.Millisecond, RenewInterval: 50 * time.Millisecond, OnRenewFailure: Continue}, []string{"job:1", longKey}},
		{"abandon", Policy{TTL: 300 * time.Millisecond, RenewInterval: 50 * time.Millisecond}, []string{"job:2", longKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, srv.Addr)
			ns := e.namespace(t, "echo", tc.p)
			for _, key := range tc.keys {
				l, err := ns.Acquire(context.Background(), key) // SET NX: accepted
				if err != nil {
					t.Fatalf("Acquire: %v", err)
				}
				renewErr := l.Renew(context.Background())
				if renewErr == nil {
					t.Fatal("Renew through a renamed EVALSHA succeeded")
				}
				if !redis.HasErrorPrefix(renewErr, "unknown command") || errors.Is(renewErr, ErrNotOwned) {
					t.Errorf("Renew = %v, want the server's ERR reply", renewErr)
				}
				time.Sleep(120 * time.Millisecond) // background renews fail and log
				releaseErr := l.Release(context.Background())
				if releaseErr == nil {
					t.Fatal("Release through a renamed EVALSHA succeeded")
				}
				for what, s := range map[string]string{"Renew": renewErr.Error(), "Release": releaseErr.Error(), "logs": e.logs.String()} {
					if strings.Contains(s, l.token[:6]) {
						t.Errorf("%s carries (part of) the token:\n%s", what, s)
					}
				}
				_ = e.rdb.Del(context.Background(), key).Err()
			}
			if !strings.Contains(e.logs.String(), "lock renewal failed") && !strings.Contains(e.logs.String(), "lock abandoned") {
				t.Errorf("no renew failure logged:\n%s", e.logs.String())
			}
		})
	}
	for _, p := range []Policy{{TTL: time.Second, Fencing: true}, {TTL: time.Second, RecordHolder: true}} {
		e := newEnv(t, srv.Addr)
		ns := e.namespace(t, "echo-acquire", p)
		for _, key := range []string{"job:3", longKey} {
			_, err := ns.TryAcquire(context.Background(), key)
			if err == nil || errors.Is(err, ErrBusy) {
				t.Fatalf("TryAcquire by script through a renamed EVALSHA = %v, want the server's error", err)
			}
			// The token is not at hand here: the quotation itself must be gone.
			if strings.Contains(err.Error(), "'"+key+"' '") {
				t.Errorf("TryAcquire's error quotes the script's arguments:\n%v", err)
			}
		}
	}
}
