package exporterconfig

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/lockwatch/lockwatch/internal/testkit"
)

// TestClientTLS connects over rediss:// to a TLS-only server that requires client certificates.
func TestClientTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	srv := redistest.Start(t, redistest.WithTLS(pki.ServerCert, pki.ServerKey, pki.CAFile))
	tests := []struct {
		name    string
		tls     TLS
		wantErr string
	}{
		{"CA and client certificate", TLS{CAFile: pki.CAFile, CertFile: pki.ClientCert, KeyFile: pki.ClientKey}, ""},
		{"no client certificate", TLS{CAFile: pki.CAFile}, "certificate"},
		{"unknown CA", TLS{CertFile: pki.ClientCert, KeyFile: pki.ClientKey}, "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Redis{Addr: "rediss://" + srv.Addr, TLS: tt.tls}
			c, err := cfg.NewClient()
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err = c.Ping(ctx).Err()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("PING over TLS: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("PING error %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestPasswordFileRotation changes the server's password and the file: new connections pick the
// new password up without a new client.
func TestPasswordFileRotation(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--requirepass", "first"))
	pwFile := testkit.WriteFile(t, "pw", "first\n")
	c, err := Redis{Addr: srv.Addr, PasswordFile: pwFile}.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING with the first password: %v", err)
	}
	if err := c.ConfigSet(ctx, "requirepass", "second").Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A rotated password only matters for new connections: drop every pooled one.
	reconnect := func() error {
		_ = c.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no").Err()
		var err error
		for range 3 { // the first command may still find a killed connection in the pool
			if err = c.Ping(ctx).Err(); err == nil {
				return nil
			}
		}
		return err
	}
	if err := reconnect(); err != nil {
		t.Fatalf("PING after rotation: %v", err)
	}
	if err := os.WriteFile(pwFile, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reconnect(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("PING with a wrong password in the file: %v, want WRONGPASS", err)
	}
}
