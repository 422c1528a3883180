package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets this test binary serve as a CPU hog, as lockbench does for startHogs.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "-cpu-hog" && os.Args[2] == "-cpu-hog-cpu" {
		cpu, err := strconv.Atoi(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		runHog(cpu)
		return
	}
	os.Exit(m.Run())
}

// Every hog spins on a CPU of its own: left to the kernel, two hogs on two CPUs shared one CPU
// about half of the time, and the loaded shapes measured where they happened to run.
func TestHogsSpinOnCPUsOfTheirOwn(t *testing.T) {
	cpus, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < 2 {
		t.Skipf("this process may use %d CPU; the test needs two", len(cpus))
	}
	hs, err := startHogs(2)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.stop()
	for i, h := range hs {
		want := strconv.Itoa(cpus[i])
		var got []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			got = threadCPUs(t, h.cmd.Process.Pid)
			if busiest := busiestThread(h.cmd.Process.Pid); busiest != "" && cpuListOf(h.cmd.Process.Pid, busiest) == want {
				break
			}
		}
		if busiest := busiestThread(h.cmd.Process.Pid); cpuListOf(h.cmd.Process.Pid, busiest) != want {
			t.Errorf("hog %d: its spinning thread may run on CPUs %q, want only %s (its threads: %v)", i, cpuListOf(h.cmd.Process.Pid, busiest), want, got)
		}
	}
}

// threadCPUs lists the CPUs each thread of process pid may run on.
func threadCPUs(t *testing.T, pid int) []string {
	t.Helper()
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, cpuListOf(pid, filepath.Base(d)))
	}
	return out
}

// busiestThread is the thread of process pid that has used the most CPU time: a hog's spinning
// one.
func busiestThread(pid int) string {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	best, bestTicks := "", -1
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name (which is in parentheses): utime is the 12th.
		_, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.Atoi(f[11])
		stime, _ := strconv.Atoi(f[12])
		if utime+stime > bestTicks {
			best, bestTicks = filepath.Base(d), utime+stime
		}
	}
	return best
}

func cpuListOf(pid int, tid string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, tid))
	if err != nil {
		return ""
	}
	return colonFields(string(b))["Cpus_allowed_list"]
}
