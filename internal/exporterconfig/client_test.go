package exporterconfig

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redistest"
)

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client certificate, all PEM.
type testPKI struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lockwatch test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := testPKI{caFile: writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)}
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClientTLS connects over rediss:// to a TLS-only server that requires client certificates.
func TestClientTLS(t *testing.T) {
	pki := newTestPKI(t)
	srv := redistest.Start(t, redistest.WithTLS(pki.serverCert, pki.serverKey, pki.caFile))
	tests := []struct {
		name    string
		tls     TLS
		wantErr string
	}{
		{"CA and client certificate", TLS{CAFile: pki.caFile, CertFile: pki.clientCert, KeyFile: pki.clientKey}, ""},
		{"no client certificate", TLS{CAFile: pki.caFile}, "certificate"},
		{"unknown CA", TLS{CertFile: pki.clientCert, KeyFile: pki.clientKey}, "certificate"},
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
	pwFile := writeFile(t, "pw", "first\n")
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
