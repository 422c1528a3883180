package drills

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The exporter drills run the real lock-exporter binary, built once per test run.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func exporterBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lockwatch-drills-")
		if err != nil {
			buildErr = err
			return
		}
		if binPath, buildErr = testkit.Build(dir, "./cmd/lock-exporter"); buildErr != nil {
			_ = os.RemoveAll(dir)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// aclUser and aclPassword are the exporter's least-privilege Redis user in the drills.
const (
	aclUser     = testkit.ACLUser
	aclPassword = "drill-acl-password"
)

// aclFile writes a users.acl with the documented exporter user and an all-powerful default
// user for the drill's own clients. Given to redis-server with --aclfile, it survives restarts.
func aclFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.acl")
	content := "user default on nopass ~* &* +@all\nuser " + aclUser + " " + strings.Join(testkit.DocumentedACL(t, aclPassword), " ") + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// aclEnv is the exporter's environment: the ACL user's credentials (a password has no flag).
func aclEnv() []string {
	return []string{"LOCK_EXPORTER_REDIS_USERNAME=" + aclUser, "LOCK_EXPORTER_REDIS_PASSWORD=" + aclPassword}
}

// exporter is a running lock-exporter process.
type exporter struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
	base   string // scheme://host:port
	client *http.Client
	done   chan error
	once   sync.Once
}

// startExporter runs the binary with args plus a free listen address and waits until it
// accepts connections. Its log (stderr) and every scrape are watched by the audit.
func startExporter(t *testing.T, a *audit, env []string, tlsCfg *tls.Config, args ...string) *exporter {
	t.Helper()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(exporterBinary(t), append([]string{"--web.listen-address", addr, "--log.level", "debug"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	e := &exporter{t: t, cmd: cmd, stderr: &testkit.SyncBuffer{}, base: "http://" + addr, done: make(chan error, 1)}
	transport := &http.Transport{DisableKeepAlives: true}
	if tlsCfg != nil {
		e.base = "https://" + addr
		transport.TLSClientConfig = tlsCfg
	}
	e.client = &http.Client{Transport: transport, Timeout: 15 * time.Second}
	cmd.Stdout, cmd.Stderr = e.stderr, e.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { e.done <- cmd.Wait() }()
	a.watchLogs("exporter log", e.stderr)
	t.Cleanup(func() { e.stop() })
	testkit.Eventually(t, 10*time.Second, "the exporter to listen", func() bool {
		select {
		case err := <-e.done:
			e.done <- err
			t.Fatalf("exporter exited at start (%v): %s", err, e.stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return e
}

// stop sends SIGTERM and waits: a clean shutdown exits 0.
func (e *exporter) stop() {
	e.once.Do(func() {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-e.done:
			if err != nil {
				e.t.Errorf("exporter exit after SIGTERM: %v\n%s", err, e.stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = e.cmd.Process.Kill()
			<-e.done
			e.t.Errorf("exporter did not stop within 10s of SIGTERM")
		}
	})
}

// scrape is one GET of /metrics, as Prometheus sends it with a scrape timeout of timeout.
type scrape struct {
	status   int
	text     string
	took     time.Duration
	families map[string]*dto.MetricFamily
}

func (e *exporter) scrape(t *testing.T, a *audit, timeout time.Duration, user, password string) scrape {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = io.Copy(&b, resp.Body)
	s := scrape{status: resp.StatusCode, text: b.String(), took: time.Since(start)}
	if err != nil {
		t.Fatalf("scrape body: %v", err)
	}
	a.text("scrape", s.text)
	if s.status == http.StatusOK {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if s.families, err = parser.TextToMetricFamilies(strings.NewReader(s.text)); err != nil {
			t.Fatalf("parse scrape: %v", err)
		}
	}
	return s
}

// gauge returns the value of the series name whose labels include labels (name, value pairs);
// ok is false when there is no such series.
func (s scrape) gauge(name string, labels ...string) (float64, bool) {
	f := s.families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if label(m, labels[i]) != labels[i+1] {
				match = false
			}
		}
		if match && m.Gauge != nil {
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// up is lock_exporter_up, failing the test when the scrape has none.
func (s scrape) up(t *testing.T) float64 {
	t.Helper()
	v, ok := s.gauge("lock_exporter_up")
	if !ok {
		t.Fatalf("scrape (status %d) has no lock_exporter_up:\n%s", s.status, s.text)
	}
	return v
}

// runBinary runs lock-exporter with args to completion and returns its exit status and output.
func runBinary(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exporterBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run lock-exporter %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}
