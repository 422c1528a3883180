package main

import (
	"io"
	"os"
	"os/exec"
	"runtime"
)

// The loaded shapes run beside CPU hogs: processes that spin on one core each, started by
// lockbench for the shape's runs and stopped after them, so that every library meets the same
// contention for the CPU (the regime where the client's CPU is scarce).

// runHog spins until stdin closes: lockbench's -cpu-hog child.
func runHog() {
	runtime.GOMAXPROCS(1)
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

// startHogs starts n CPU hogs (lockbench -cpu-hog).
func startHogs(n int) (hogs, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var hs hogs
	for range n {
		cmd := exec.Command(self, "-cpu-hog")
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
