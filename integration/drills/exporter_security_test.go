package drills

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestExporterTLSAndAuth runs the whole chain encrypted and authenticated: Redis serves TLS
// only, with a CA the test generated, and requires client certificates; lease holders and the
// exporter connect with rediss:// as their own users (the exporter as its least-privilege ACL
// user); the exporter serves /metrics over HTTPS with basic auth from --web.config.file. Scrapes
// with the right credentials see the locks; wrong or missing credentials and plain HTTP are
// refused; nothing served or logged carries a token.
func TestExporterTLSAndAuth(t *testing.T) {
	p := testkit.NewPKI(t)
	srv := redistest.Start(t, redistest.WithTLS(p.ServerCert, p.ServerKey, p.CAFile),
		redistest.WithArgs("--aclfile", aclFile(t)))
	a := newAudit(t)
	exporterBinary(t)
	defer checkLeaks(t)()
	ctx := context.Background()

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, TLSConfig: p.ClientTLS(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	reg, logs := prometheus.NewRegistry(), &testkit.SyncBuffer{}
	a.watchRegistry("holder metrics", reg)
	a.watchLogs("holder log", logs)
	c, err := lease.New(rdb, lease.Options{Registerer: reg, Logger: newLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.Declare("payments", lease.Policy{TTL: 30 * time.Second, Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	pattern := "drill:" + t.Name() + ":*"
	for i := 0; i < 2; i++ {
		l, err := ns.Acquire(ctx, uniqueKey(t, "pay"))
		if err != nil {
			t.Fatalf("acquire over TLS: %v", err)
		}
		a.learn(t, rdb, l.Key())
		defer l.Release(ctx)
	}

	const user, password = "prometheus", "drill-web-password"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webConfig, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		p.ServerCert, p.ServerKey, user, hash)), 0o600); err != nil {
		t.Fatal(err)
	}
	redisTLS := []string{"--redis.addr", "rediss://" + srv.Addr, "--redis.tls-ca-file", p.CAFile,
		"--redis.tls-cert-file", p.ClientCert, "--redis.tls-key-file", p.ClientKey}
	ex := startExporter(t, a, aclEnv(), p.ClientTLS(), append(redisTLS, "--web.config.file", webConfig,
		"--namespace", "payments="+pattern)...)
	defer ex.stop()

	s := ex.scrape(t, a, 5*time.Second, user, password)
	if s.status != http.StatusOK {
		t.Fatalf("scrape with the right credentials: status %d", s.status)
	}
	if keys, _ := s.gauge("lock_keys", "lock_namespace", "payments"); s.up(t) != 1 || keys != 2 {
		t.Errorf("over TLS as the ACL user: lock_exporter_up %v, lock_keys %v; want 1 and 2", s.up(t), keys)
	}
	for _, tc := range []struct{ name, user, password string }{
		{"wrong password", user, "not-the-password"},
		{"unknown user", "mallory", password},
		{"no credentials", "", ""},
	} {
		if s := ex.scrape(t, a, 5*time.Second, tc.user, tc.password); s.status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tc.name, s.status)
		}
	}
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := plain.Get(strings.Replace(ex.base, "https://", "http://", 1) + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP scrape of a TLS exporter answered 200")
		}
	}

	// inspect over rediss:// as the ACL user.
	code, out, errOut := runBinary(t, aclEnv(), append([]string{"inspect"}, append(redisTLS, "--namespace", "payments="+pattern)...)...)
	a.text("inspect stdout", out)
	a.text("inspect stderr", errOut)
	if code != 0 || strings.Count(out, "\ndrill:") != 2 {
		t.Errorf("inspect over TLS exited %d:\n%s%s", code, out, errOut)
	}

	// Without the client certificate Redis refuses the exporter, and the scrape says so.
	ex2 := startExporter(t, a, aclEnv(), nil, "--redis.addr", "rediss://"+srv.Addr, "--redis.tls-ca-file", p.CAFile,
		"--namespace", "payments="+pattern)
	defer ex2.stop()
	if s := ex2.scrape(t, a, 5*time.Second, "", ""); s.up(t) != 0 {
		t.Errorf("exporter without a client certificate: lock_exporter_up = 1, want 0")
	}
	ex.stop()
	ex2.stop()
}
