package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// The loaded shapes run beside CPU hogs: processes that spin on one core each, started by
// lockbench for the shape's runs and stopped after them, so that every library meets the same
// contention for the CPU (the regime where the client's CPU is scarce).
//
// Each hog spins on a CPU of its own (hog i on CPU i modulo the CPUs this process may use). Left
// to the kernel, two hogs on two CPUs shared one CPU about half of the time (sampled every
// 100 ms), leaving the other to the client and Redis: lease made 46–69k cycles/s in such
// rounds and 15–27k in the others, so the shape's verdict depended on where the hogs happened
// to run while each variant's second went by.

// runHog spins on CPU cpu (none when negative) until stdin closes: lockbench's -cpu-hog child.
func runHog(cpu int) {
	runtime.GOMAXPROCS(1)
	if cpu >= 0 {
		// The spinning loop below runs on this goroutine, so on this thread.
		runtime.LockOSThread()
		if err := pinThread(cpu); err != nil {
			fmt.Fprintf(os.Stderr, "lockbench -cpu-hog: pinning to CPU %d: %v\n", cpu, err)
			os.Exit(1)
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	n := 0
	for {
		n++
	}
}

// hog is one running CPU hog process; closing stdin (or lockbench's exit) ends it.
type hog struct {
	cmd   *exec.Cmd
	stdin io.Closer
}

// hogs are running CPU hog processes.
type hogs []hog

// pinThread binds the calling thread to CPU cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if !set.IsSet(cpu) {
		return fmt.Errorf("CPU %d is beyond the affinity mask", cpu)
	}
	return unix.SchedSetaffinity(0, &set)
}

// allowedCPUs lists the CPUs this process may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	cpus := make([]int, 0, set.Count())
	for i := 0; len(cpus) < cap(cpus); i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// startHogs starts n CPU hogs (lockbench -cpu-hog), hog i pinned to the i-th allowed CPU
// (modulo their number).
func startHogs(n int) (hogs, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cpus, err := allowedCPUs()
	if err != nil || len(cpus) == 0 {
		return nil, fmt.Errorf("reading this process's CPUs: %v", err)
	}
	var hs hogs
	for i := range n {
		cmd := exec.Command(self, "-cpu-hog", "-cpu-hog-cpu", strconv.Itoa(cpus[i%len(cpus)]))
		stdin, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			hs.stop()
			return nil, err
		}
		hs = append(hs, hog{cmd, stdin})
	}
	return hs, nil
}

// stop kills the hogs and waits for them.
func (hs hogs) stop() {
	for _, h := range hs {
		_ = h.stdin.Close()
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
	}
}
