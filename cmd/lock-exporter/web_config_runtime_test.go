package main

import (
	"crypto/tls"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestWebConfigTurnedBadWithholdsContent replaces a running exporter's --web.config.file with a
// password file. exporter-toolkit reads the file again for every request (basic auth) and every
// TLS handshake, and the YAML parser's error quotes the start of the value it could not read
// ("cannot unmarshal !!str `hunter2-s...`"): the log must name the file, withhold the value, and
// stay one line per failure, as the start-up check does.
func TestWebConfigTurnedBadWithholdsContent(t *testing.T) {
	const secret = "hunter2-secret-value\n"
	srv := redistest.Start(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	pki := testkit.NewPKI(t)
	tests := []struct {
		name    string
		content string
		scheme  string
		client  *http.Client
	}{
		{"basic auth", "basic_auth_users:\n  prometheus: " + string(hash) + "\n", "http", &http.Client{}},
		{"TLS", "tls_server_config:\n  cert_file: " + pki.ServerCert + "\n  key_file: " + pki.ServerKey + "\n", "https",
			&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS12}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			web := testkit.WriteFile(t, "web.yml", tt.content)
			s := startServer(t, nil, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*", "--web.config.file", web)
			url := strings.Replace(s.url, "http://", tt.scheme+"://", 1) + "/-/healthy"
			tt.client.Timeout = 10 * time.Second
			tt.client.Transport = withoutKeepAlives(tt.client.Transport)
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.SetBasicAuth("prometheus", "scrape-secret")
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatalf("with the valid file: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("with the valid file: status %d", resp.StatusCode)
			}

			if err := os.WriteFile(web, []byte(secret), 0o600); err != nil {
				t.Fatal(err)
			}
			if resp, err := tt.client.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("with a password file as web config: status 200")
				}
			}
			var line string
			for deadline := time.Now().Add(5 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				for _, l := range strings.Split(s.stderr.String(), "\n") {
					if strings.Contains(l, "level=ERROR") {
						line = l
					}
				}
			}
			logs := s.stderr.String()
			t.Logf("log line: %s", line)
			if strings.Contains(logs, "hunter2") {
				t.Errorf("the log quotes the web config file:\n%s", logs)
			}
			if !strings.Contains(line, "file="+web) || !strings.Contains(line, "(a value, not shown)") || strings.Contains(line, `\n`) {
				t.Errorf("error line %q does not name the file %s, say its value is not shown, or spans lines", line, web)
			}
		})
	}
}

// withoutKeepAlives is rt (nil: a new transport) with a connection per request, so that every
// request makes exporter-toolkit read the web config again (TLS reads it per handshake).
func withoutKeepAlives(rt http.RoundTripper) http.RoundTripper {
	tr, _ := rt.(*http.Transport)
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.DisableKeepAlives = true
	return tr
}
