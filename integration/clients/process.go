package clients

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// closeGrace is how long a driver may take to exit after its stdin closes; a loaded machine
// starts and stops node slowly, and a driver that takes longer is killed.
const closeGrace = 20 * time.Second

// hello is a driver's first line: the client it runs, or the package it misses.
type hello struct {
	Hello *struct {
		Client  string `json:"client"`
		Version string `json:"version"`
		Via     string `json:"via"`
	} `json:"hello"`
	Missing string `json:"missing"`
	Detail  string `json:"detail"`
}

// wireStep is a Step as the driver scripts read it.
type wireStep struct {
	Seq    int    `json:"seq"`
	Op     Op     `json:"op"`
	Holder string `json:"holder"`
	Key    string `json:"key"`
	TTLms  int64  `json:"ttl_ms"`
}

// wireOutcome is an Outcome as the driver scripts write it.
type wireOutcome struct {
	Seq int `json:"seq"`
	Outcome
}

// processDriver is a client running as a child process that speaks JSON lines.
type processDriver struct {
	kind    Kind
	version string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string // stdout, closed at EOF
	stderr  *testkit.SyncBuffer

	mu  sync.Mutex // steps are taken one at a time, in order
	seq int
}

func redisPyCommand(e Env, addr string) *exec.Cmd {
	return exec.Command(e.Python, filepath.Join(e.Dir, "python", "redispy_driver.py"), addr)
}

func nodeCommand(e Env, kind Kind, addr string) (*exec.Cmd, error) {
	node, err := exec.LookPath(e.Node)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: node not found (%v): install node and npm (Debian: apt-get install -y nodejs npm), then run npm ci in %s",
			ErrClientMissing, kind, err, filepath.Join(e.Dir, "node"))
	}
	return exec.Command(node, filepath.Join(e.Dir, "node", "driver.cjs"), string(kind), addr), nil
}

// installHint is the one line that says how to install what a driver reported missing.
func installHint(kind Kind, pkg, detail, dir string) string {
	if kind == RedisPy {
		return fmt.Sprintf("%s: %s (%s): install Debian's package: apt-get install -y python3-redis (or run bash .ci/run)", kind, pkg, detail)
	}
	return fmt.Sprintf("%s: %s (%s): run (cd %s && npm ci) (or bash .ci/run)", kind, pkg, detail, dir)
}

func launchProcess(ctx context.Context, kind Kind, cmd *exec.Cmd) (*processDriver, error) {
	if _, err := exec.LookPath(cmd.Path); err != nil {
		return nil, fmt.Errorf("%w: %s: %v: install Debian's python3 and python3-redis: apt-get install -y python3 python3-redis", ErrClientMissing, kind, err)
	}
	d := &processDriver{kind: kind, cmd: cmd, lines: make(chan string, 16), stderr: &testkit.SyncBuffer{}}
	cmd.Stderr = d.stderr
	// A driver must not outlive the test binary, even one that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrDriver, kind, err)
	}
	go readLines(stdout, d.lines)
	if err := d.greet(ctx); err != nil {
		d.kill()
		return nil, err
	}
	return d, nil
}

func readLines(r io.Reader, lines chan<- string) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines <- sc.Text()
	}
}

// greet reads the driver's first line: the client's version, or what is missing.
func (d *processDriver) greet(ctx context.Context) error {
	line, err := d.next(ctx)
	if err != nil {
		return err
	}
	var h hello
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return fmt.Errorf("%w: %s: first line %q is not a hello", ErrDriver, d.kind, line)
	}
	if h.Missing != "" {
		return fmt.Errorf("%w: %s", ErrClientMissing, installHint(d.kind, h.Missing, h.Detail, filepath.Dir(d.cmd.Args[1])))
	}
	if h.Hello == nil {
		return fmt.Errorf("%w: %s: first line %q is not a hello", ErrDriver, d.kind, line)
	}
	d.version = fmt.Sprintf("%s %s (%s)", h.Hello.Client, h.Hello.Version, h.Hello.Via)
	return nil
}

// next returns the driver's next stdout line.
func (d *processDriver) next(ctx context.Context) (string, error) {
	select {
	case line, ok := <-d.lines:
		if !ok {
			return "", fmt.Errorf("%w: %s exited: %s", ErrDriver, d.kind, d.stderrTail())
		}
		return line, nil
	case <-ctx.Done():
		return "", fmt.Errorf("%w: %s: no answer: %v", ErrDriver, d.kind, context.Cause(ctx))
	}
}

func (d *processDriver) stderrTail() string {
	s := strings.TrimSpace(d.stderr.String())
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "no output on stderr"
	}
	return s
}

func (d *processDriver) Kind() Kind      { return d.kind }
func (d *processDriver) Version() string { return d.version }

func (d *processDriver) Do(ctx context.Context, s Step) (Outcome, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	req, err := json.Marshal(wireStep{Seq: d.seq, Op: s.Op, Holder: s.Holder, Key: s.Key, TTLms: s.TTL.Milliseconds()})
	if err != nil {
		return Outcome{}, err
	}
	if _, err := d.stdin.Write(append(req, '\n')); err != nil {
		return Outcome{}, fmt.Errorf("%w: %s: write step: %v (%s)", ErrDriver, d.kind, err, d.stderrTail())
	}
	line, err := d.next(ctx)
	if err != nil {
		return Outcome{}, err
	}
	var out wireOutcome
	if err := json.Unmarshal([]byte(line), &out); err != nil || out.Seq != d.seq {
		return Outcome{}, fmt.Errorf("%w: %s: answer %q to step %d", ErrDriver, d.kind, line, d.seq)
	}
	return out.Outcome, nil
}

// Close ends the driver by closing its stdin, as a worker finishing its input would, and kills
// it if it does not exit within closeGrace.
func (d *processDriver) Close() error {
	_ = d.stdin.Close()
	killer := time.AfterFunc(closeGrace, func() { _ = d.cmd.Process.Kill() })
	defer killer.Stop()
	for range d.lines { // the driver's last lines, if any; Wait must follow the reads
	}
	if err := d.cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s: %v: %s", ErrDriver, d.kind, err, d.stderrTail())
	}
	return nil
}

func (d *processDriver) kill() {
	_ = d.cmd.Process.Kill()
	for range d.lines {
	}
	_ = d.cmd.Wait()
}
