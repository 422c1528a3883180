package main

import (
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// listeningLine is the log line of exporter-toolkit that names the address the exporter serves.
var listeningLine = regexp.MustCompile(`msg="Listening on" address=(127\.0\.0\.1:\d+)`)

// runBinary starts the built exporter bin with args and none of the test's LOCK_EXPORTER_*
// environment, waits until it logs the address it listens on, and stops it with SIGTERM when
// the test ends. It returns the server, the process (to signal or measure) and its log.
func runBinary(t *testing.T, bin string, args ...string) (*server, *exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	return runBinaryEnv(t, nil, bin, args...)
}

// runBinaryEnv is runBinary with an environment (GOMEMLIMIT, GODEBUG) for the exporter.
func runBinaryEnv(t *testing.T, env []string, bin string, args ...string) (*server, *exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{}, env...)
	logs := &testkit.SyncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	var addr string
	testkit.Eventually(t, 30*time.Second, "the exporter to listen", func() bool {
		if m := listeningLine.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return &server{url: "http://" + addr}, cmd, logs
}
