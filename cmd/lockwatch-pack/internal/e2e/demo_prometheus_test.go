package e2e

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// bannerEnd is the demo banner's last line: every link is printed before it.
const bannerEnd = "Ctrl-C stops the demo."

// link is a URL as a terminal shows it, without the punctuation of the sentence around it.
var link = regexp.MustCompile(`https?://[^\s)'"]+`)

// TestDemoPrometheusLinks runs what `make demo DEMO_PROMETHEUS=1` runs, tools/demo-prometheus,
// and follows every link that it and the demo's banner print: each must answer 200 from the
// Prometheus built from tools/go.mod, which has no web UI (its UI pages answer 500), and from
// the demo. When the demo stops, its Prometheus must stop with it.
func TestDemoPrometheusLinks(t *testing.T) {
	_, root, work, _ := startE2E(t, "redis-server") // builds Prometheus, which the script runs
	demoBin := testkit.BuildBinary(t, work, "./cmd/lockwatch-demo")
	promAddr, metricsAddr := testkit.UnusedAddr(t), testkit.UnusedAddr(t)
	script := startDemoPrometheus(t, root, work, demoBin, promAddr, metricsAddr)
	links := script.bannerLinks(t)
	if !strings.Contains(strings.Join(links, " "), promAddr) {
		t.Fatalf("the banner names no link to Prometheus at %s: %q", promAddr, links)
	}
	script.waitAnswers(t, "http://"+promAddr+"/-/ready")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	rulesLoaded := false
	for _, l := range links {
		resp, err := client.Get(l)
		if err != nil {
			t.Errorf("GET %s: %v", l, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s (%.200s), want 200 OK", l, resp.Status, strings.TrimSpace(string(body)))
		}
		// The rules link is where the pack's rules show: they are loaded, as the banner says.
		rulesLoaded = rulesLoaded || strings.Contains(l, "/api/v1/rules") && strings.Contains(string(body), `"LockKeyWithoutTTL"`)
	}
	if !rulesLoaded {
		t.Errorf("no link of the banner lists the pack's rules (LockKeyWithoutTTL): %q", links)
	}
	script.interrupt(t)
	if _, err := client.Get("http://" + promAddr + "/-/ready"); err == nil {
		t.Errorf("Prometheus at %s still answers after the demo stopped", promAddr)
	}
}

// demoScript is tools/demo-prometheus running in a process group of its own, with the demo
// and the Prometheus it starts.
type demoScript struct {
	cmd    *exec.Cmd
	lines  chan string   // its stdout, line by line; closed when every writer has exited
	exited chan struct{} // closed when the script has exited
	log    string        // its stderr
}

func startDemoPrometheus(t *testing.T, root, work, demoBin, promAddr, metricsAddr string) *demoScript {
	t.Helper()
	s := &demoScript{lines: make(chan string, 4096), exited: make(chan struct{}), log: filepath.Join(work, "demo-prometheus.log")}
	stderr, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(filepath.Join(root, "tools", "demo-prometheus"), "--web.listen-address", metricsAddr, "--duration", "10m")
	s.cmd.Env = append(os.Environ(), "GO="+testkit.GoBinary(), "DEMO_BIN="+demoBin,
		"DEMO_PROMETHEUS_ADDR="+promAddr, "DEMO_METRICS_ADDR="+metricsAddr)
	s.cmd.Stdout, s.cmd.Stderr = w, stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the script and the demo
	err = s.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	go s.readLines(r)
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *demoScript) readLines(r *os.File) {
	defer r.Close()
	defer close(s.lines)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case s.lines <- sc.Text():
		default: // the status lines nobody reads any more
		}
	}
}

// bannerLinks reads the output up to the demo banner's last line and returns every link in it.
func (s *demoScript) bannerLinks(t *testing.T) []string {
	t.Helper()
	var out []string
	for line := range s.lines {
		out = append(out, line)
		if line == bannerEnd {
			var links []string
			for _, l := range out {
				for _, u := range link.FindAllString(l, -1) {
					links = append(links, strings.TrimRight(u, ".,;:"))
				}
			}
			t.Logf("banner:\n%s", strings.Join(out, "\n"))
			return links
		}
	}
	t.Fatalf("tools/demo-prometheus ended before the banner's %q:\n%s\n%s", bannerEnd, strings.Join(out, "\n"), tail(s.log, 40))
	return nil
}

// waitAnswers polls url until it answers 200, for as long as the script runs.
func (s *demoScript) waitAnswers(t *testing.T, url string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("tools/demo-prometheus exited before %s answered:\n%s", url, tail(s.log, 40))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// interrupt sends Ctrl-C's SIGINT to the script's process group and waits until the script has
// exited, which it does only after stopping the demo and its Prometheus.
func (s *demoScript) interrupt(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(2 * time.Minute):
		t.Errorf("tools/demo-prometheus still runs 2 minutes after SIGINT:\n%s", tail(s.log, 40))
	}
}

// stop kills the script's process group if the script still runs (a failed test), and waits
// for its output to close.
func (s *demoScript) stop(t *testing.T) {
	select {
	case <-s.exited:
	default:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	for range s.lines {
	}
	if t.Failed() {
		t.Logf("--- tools/demo-prometheus stderr (last 40 lines) ---\n%s", tail(s.log, 40))
	}
}
