package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestSecretsNeverPrinted gives a Redis password in every place an address can come from (flag,
// environment, configuration file, malformed and mistyped values included) and searches all
// output, of serving and of inspect, for it. The refusal used to quote the URL, password and all.
func TestSecretsNeverPrinted(t *testing.T) {
	const secret = "pw-5ecret-7c1e"
	url := "redis://lock-exporter:" + secret + "@127.0.0.1:6379"
	tests := []struct {
		name string
		vars map[string]string
		args []string
	}{
		{"flag", nil, []string{"--redis.addr", url}},
		{"cluster flag", nil, []string{"--redis.cluster-addr", url}},
		{"environment", map[string]string{"LOCK_EXPORTER_REDIS_ADDR": url}, nil},
		{"file", nil, []string{"--config.file", testkit.WriteFile(t, "addr.yml", "redis:\n  addr: "+url+"\n")}},
		{"file, sentinel", nil, []string{"--config.file", testkit.WriteFile(t, "sentinel.yml",
			"redis:\n  sentinel_addrs: ['"+url+"']\n  sentinel_master: m\n")}},
		{"file, wrong type", nil, []string{"--config.file", testkit.WriteFile(t, "type.yml", "redis:\n  addr: ["+url+"]\n")}},
		{"unparseable URL", nil, []string{"--redis.addr", "redis://u:" + secret + "@ho st:1/x"}},
		{"password in the path of a bad URL", nil, []string{"--redis.addr", "redis://u:" + secret + "@127.0.0.1:6379/0?x=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range tt.vars {
				vars[k] = v
			}
			for _, args := range [][]string{
				append([]string{"--web.listen-address", "127.0.0.1:0"}, tt.args...),
				append([]string{"inspect", "--namespace", "jobs=jobs:*"}, tt.args...),
			} {
				code, stdout, stderr := runCmd(t, vars, append(args, "--namespace", "jobs=jobs:*")...)
				if code != exitUsage {
					t.Errorf("%v: status %d, want %d (stderr %q)", args[:1], code, exitUsage, stderr)
				}
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("%v: the password was printed: %q", args[:1], stdout+stderr)
				}
				if !strings.Contains(stderr, "lock-exporter") {
					t.Errorf("%v: no error line: %q", args[:1], stderr)
				}
			}
		})
	}
}

// TestIdleConnectionsClosed opens 50 connections to an exporter with basic auth: half are left
// silent, half send one request without credentials (401) and then idle on keep-alive. The server
// must close all of them. (It used to keep idle keep-alive connections for ever: enough of them
// exhausted the process' file descriptors and /metrics stopped answering.)
func TestIdleConnectionsClosed(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := testkit.WriteFile(t, "web.yml", "basic_auth_users:\n  prometheus: "+string(hash)+"\n")
	limits := exporter.DefaultHTTPLimits
	limits.ReadHeader, limits.ReadBody, limits.Idle = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	s := startServerWith(t, func(e *env) { e.httpLimits = &limits }, nil,
		"--web.config.file", web, "--redis.addr", testkit.UnusedAddr(t), "--namespace", "jobs=jobs:*")
	addr := strings.TrimPrefix(s.url, "http://")

	const conns = 50
	var wg sync.WaitGroup
	closed := make(chan error, conns)
	for i := range conns {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		wg.Go(func() {
			r := bufio.NewReader(conn)
			if i%2 == 0 {
				if _, err := io.WriteString(conn, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
					closed <- err
					return
				}
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					closed <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					closed <- errors.New("status " + resp.Status + ", want 401")
					return
				}
			}
			// The server closing the connection ends this read with EOF; the test's own deadline
			// is far longer than the limits, so a timeout here means it never closed.
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := r.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
				closed <- errors.New("still open after 10s")
				return
			}
			closed <- nil
		})
	}
	wg.Wait()
	close(closed)
	for err := range closed {
		if err != nil {
			t.Error(err)
		}
	}
}
