package exporterconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/testharness/faultproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestClientTLS connects over rediss:// to a TLS-only server that requires client certificates.
//
// Under TLS 1.3 a client without a certificate finishes its side of the handshake before the
// server checks it, so the server's refusal reaches the client either as its alert ("certificate
// required") or, when the server has already closed, as a reset of the client's first write.
func TestClientTLS(t *testing.T) {
	pki := testkit.NewPKI(t)
	srv := redistest.Start(t, redistest.WithTLS(pki.ServerCert, pki.ServerKey, pki.CAFile))
	refusedByServer := []string{"certificate", "connection reset by peer", "broken pipe", "EOF"}
	tests := []struct {
		name    string
		tls     TLS
		wantErr []string // the error mentions one of these; none: no error
	}{
		{"CA and client certificate", TLS{CAFile: pki.CAFile, CertFile: pki.ClientCert, KeyFile: pki.ClientKey}, nil},
		{"no client certificate", TLS{CAFile: pki.CAFile}, refusedByServer},
		{"unknown CA", TLS{CertFile: pki.ClientCert, KeyFile: pki.ClientKey}, []string{"certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Redis: Redis{Addr: "rediss://" + srv.Addr, TLS: tt.tls}}
			c, err := cfg.NewClient()
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err = c.Ping(ctx).Err()
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("PING over TLS: %v", err)
			case tt.wantErr != nil && !mentionsAny(err, tt.wantErr):
				t.Errorf("PING error %v, want one mentioning one of %q", err, tt.wantErr)
			}
		})
	}
}

func mentionsAny(err error, words []string) bool {
	if err == nil {
		return false
	}
	for _, w := range words {
		if strings.Contains(err.Error(), w) {
			return true
		}
	}
	return false
}

// TestPasswordFileRotation changes the server's password and the file: new connections pick the
// new password up without a new client.
func TestPasswordFileRotation(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--requirepass", "first"))
	pwFile := testkit.WriteFile(t, "pw", "first\n")
	c, err := Config{Redis: Redis{Addr: srv.Addr, PasswordFile: pwFile}}.NewClient()
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
	if err := reconnect(ctx, c); err != nil {
		t.Fatalf("PING after rotation: %v", err)
	}
	if err := os.WriteFile(pwFile, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reconnect(ctx, c); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("PING with a wrong password in the file: %v, want WRONGPASS", err)
	}
}

// reconnect drops every pooled connection of c, then PINGs on a new one: rotated credentials
// only matter for new connections. The first commands may still find a killed connection in the
// pool, so it tries three times and returns the last error.
func reconnect(ctx context.Context, c redis.UniversalClient) error {
	_ = c.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no").Err()
	var err error
	for range 3 {
		if err = c.Ping(ctx).Err(); err == nil {
			return nil
		}
	}
	return err
}

// TestClientCertificateRotation: the client certificate is read again for every new connection
// (prometheus/common/config's GetClientCertificate), so a rotated certificate needs no restart.
// A certificate from another CA in the files makes new connections fail; the right one back
// makes them work again, with the same client.
func TestClientCertificateRotation(t *testing.T) {
	pki := testkit.NewPKI(t)
	srv := redistest.Start(t, redistest.WithTLS(pki.ServerCert, pki.ServerKey, pki.CAFile))
	certFile, keyFile := testkit.WriteFile(t, "client.crt", ""), testkit.WriteFile(t, "client.key", "")
	writeOver(t, certFile, pki.ClientCert)
	writeOver(t, keyFile, pki.ClientKey)
	c, err := Config{Redis: Redis{Addr: "rediss://" + srv.Addr, TLS: TLS{CAFile: pki.CAFile, CertFile: certFile, KeyFile: keyFile}}}.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING with the CA's client certificate: %v", err)
	}
	stranger := testkit.NewPKI(t) // a client certificate the server's CA did not sign
	writeOver(t, certFile, stranger.ClientCert)
	writeOver(t, keyFile, stranger.ClientKey)
	if err := reconnect(ctx, c); err == nil {
		t.Fatal("PING with a certificate of another CA in the files succeeded: the files were not read again")
	}
	writeOver(t, certFile, pki.ClientCert)
	writeOver(t, keyFile, pki.ClientKey)
	if err := reconnect(ctx, c); err != nil {
		t.Fatalf("PING after putting the CA's certificate back: %v", err)
	}
}

// writeOver replaces dst's content with src's.
func writeOver(t *testing.T, dst, src string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPoolFitsScan scans 24 namespaces (2,400 keys) through a proxy that adds latency, so that every SCAN and
// pipeline holds its connection for a while and the namespaces' calls overlap. The rows hold
// Redis and the workload fixed and vary only the pool. (collectors.TestConnectionsPerNode checks
// that a scan never needs more than ConnectionsPerNode connections.)
func TestPoolFitsScan(t *testing.T) {
	// One pass serves every namespace: a few keys each keep it short, a few SCAN calls each
	// followed by pipelines on the inspect workers' connections.
	const namespaces, keysPer = 24, 100
	srv := redistest.Start(t)
	admin := srv.Client(t)
	cfg := Defaults()
	cfg.Scan.BatchSize = 100
	cfg.Scan.Mode = "walk" // the pool of one is the walk's; the index's build walks beside it
	ctx := context.Background()
	pipe := admin.Pipeline()
	for i := range namespaces {
		name := fmt.Sprintf("ns%02d", i)
		cfg.Namespaces = append(cfg.Namespaces, Namespace{Name: name, Pattern: name + ":*"})
		for k := range keysPer {
			pipe.Set(ctx, fmt.Sprintf("%s:%d", name, k), "token", time.Minute)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.Start(t, srv.Addr)
	proxy.SetLatency(20 * time.Millisecond)
	cfg.Redis.Addr = proxy.Addr
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}

	// smallPool is fewer connections than a pass holds at once (its SCAN loop and its inspect
	// workers), standing in for any pool smaller than collectors.ConnectionsPerNode.
	const smallPool = 1
	tests := []struct {
		name        string
		poolSize    int           // 0: as NewClient sets it
		poolTimeout time.Duration // 0: as NewClient sets it
		wantUp      bool
		wantWaits   bool
	}{
		{name: "NewClient's pool: no scan call waits for a connection", wantUp: true},
		// The scan used to run a SCAN loop per namespace, and 24 of them exhausted a pool of 20
		// and failed on its timer. One pass has one SCAN loop per node, whatever the number of
		// namespaces, so even a one-connection pool with a 50ms timeout fits it.
		{name: "one pass fits a pool of one whatever the namespaces",
			poolSize: smallPool, poolTimeout: 50 * time.Millisecond, wantUp: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := cfg.clientOptions()
			if err != nil {
				t.Fatal(err)
			}
			if tt.poolSize > 0 {
				opts.PoolSize = tt.poolSize
			}
			if tt.poolTimeout > 0 {
				opts.PoolTimeout = tt.poolTimeout
			}
			c := redis.NewUniversalClient(opts)
			defer c.Close()
			s, err := collectors.NewScanner(c, cfg.ScannerOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			scanCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			res := s.Scan(scanCtx)
			cancel()

			rc := c.(*redis.Client)
			stats := rc.PoolStats()
			if waited := stats.WaitCount+stats.Timeouts > 0; waited != tt.wantWaits {
				t.Errorf("pool of %d: %d waits, %d timeouts; want waits %v", rc.Options().PoolSize, stats.WaitCount, stats.Timeouts, tt.wantWaits)
			}
			if res.Up != tt.wantUp {
				t.Fatalf("up %v (%v), want %v", res.Up, res.Err, tt.wantUp)
			}
			if !res.Up {
				if !errors.Is(res.Err, redis.ErrPoolTimeout) {
					t.Errorf("scan error %v, want a pool timeout", res.Err)
				}
				return
			}
			for _, ns := range res.Namespaces {
				if !ns.Complete || ns.Keys != keysPer {
					t.Errorf("%s: complete %v, %d keys; want complete with %d", ns.Namespace.Name, ns.Complete, ns.Keys, keysPer)
				}
			}
		})
	}
}

// TestClientPoolOptions checks the pool settings NewClient derives from the configuration in
// every Redis mode: on Cluster, go-redis applies them to each master's pool, which is what
// collectors.ConnectionsPerNode counts.
func TestClientPoolOptions(t *testing.T) {
	two := []Namespace{{Name: "a", Pattern: "a:*"}, {Name: "b", Pattern: "b:*"}}
	tests := []struct {
		name        string
		cfg         Config
		wantSize    int
		wantTimeout time.Duration
	}{
		{"standalone, defaults", Config{Redis: Redis{Addr: "x:1"}, Scan: Defaults().Scan, Namespaces: two},
			collectors.ConnectionsPerNode(), collectors.DefaultTimeout + poolTimeoutMargin},
		{"cluster, longer scan timeout", Config{Redis: Redis{ClusterAddrs: []string{"x:1", "y:1"}}, Scan: Scan{Timeout: Duration(time.Minute)}, Namespaces: two},
			collectors.ConnectionsPerNode(), time.Minute + poolTimeoutMargin},
		{"sentinel, one namespace", Config{Redis: Redis{SentinelAddrs: []string{"x:1"}, SentinelMaster: "m"}, Namespaces: two[:1]},
			collectors.ConnectionsPerNode(), collectors.DefaultTimeout + poolTimeoutMargin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := tt.cfg.clientOptions()
			if err != nil {
				t.Fatal(err)
			}
			if opts.PoolSize != tt.wantSize || opts.PoolTimeout != tt.wantTimeout {
				t.Errorf("PoolSize %d, PoolTimeout %s; want %d and %s", opts.PoolSize, opts.PoolTimeout, tt.wantSize, tt.wantTimeout)
			}
		})
	}
}
