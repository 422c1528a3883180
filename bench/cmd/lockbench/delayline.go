package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A delay line: a TCP proxy that holds every byte it forwards for a fixed time in each
// direction, so that every library's round trip to Redis grows by the same amount, as a real
// network would add it. The kernel here has no netem, and internal/testharness/faultproxy
// delays each chunk in turn (a chunk waits behind the previous one's delay), so lockbench has
// its own: each direction stamps a chunk with its due time when it is read and writes it at
// that time, so chunks in flight overlap and the added round trip is twice the one-way delay,
// however many chunks are on the way.
//
// It runs as a child process of lockbench (-delay-line-serve), so that its CPU time, threads
// and allocations stay out of the measured process's figures.

// chunk is one read of one direction, due to be written to dst at due; a chunk without buf
// marks the end of its direction (src is then closed too).
type chunk struct {
	buf      []byte
	due      time.Time
	dst, src net.Conn
}

var chunkBufs = sync.Pool{New: func() any { return make([]byte, 64<<10) }}

// lineLanes is how many writer goroutines the delay line has. Every chunk is due a fixed time
// after it was read, so each lane's queue is in due order: its writer sleeps until the first
// chunk is due and then writes every chunk already due without sleeping again. A writer per
// connection would instead wake a thread per chunk, which a loaded machine delays by
// milliseconds.
const lineLanes = 2

// serveDelayLine accepts connections on 127.0.0.1 (its address is printed on out, one line)
// and forwards each to upstream, holding bytes oneWay in each direction, until in closes: the
// parent's way of stopping it. Meanwhile in carries the parent's probe commands (see
// serveProbes).
func serveDelayLine(in io.Reader, out io.Writer, upstream string, oneWay time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintln(out, ln.Addr().String())
	go func() {
		serveProbes(in, out, ln.Addr().String())
		_ = ln.Close()
	}()
	runDelayLine(ln, upstream, oneWay)
	return nil
}

// runDelayLine serves ln until it is closed, then closes every connection and returns once
// its goroutines have.
func runDelayLine(ln net.Listener, upstream string, oneWay time.Duration) {
	lanes := make([]chan chunk, lineLanes)
	var writers, readers sync.WaitGroup
	for i := range lanes {
		lanes[i] = make(chan chunk, 1<<16)
		writers.Go(func() { writeLane(lanes[i]) })
	}
	var mu sync.Mutex
	var conns []net.Conn
	for n := 0; ; n++ {
		down, err := ln.Accept()
		if err != nil {
			break
		}
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			_ = down.Close()
			continue
		}
		mu.Lock()
		conns = append(conns, up, down)
		mu.Unlock()
		// One lane per direction of a connection keeps each direction's bytes in order.
		readers.Go(func() { readInto(lanes[n%lineLanes], up, down, oneWay) })
		readers.Go(func() { readInto(lanes[(n+1)%lineLanes], down, up, oneWay) })
	}
	mu.Lock()
	for _, c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	readers.Wait()
	for _, l := range lanes {
		close(l)
	}
	writers.Wait()
}

// readInto reads src and queues each chunk for dst, due oneWay later. It never waits for the
// writer (unless the lane's queue is full), so a chunk's delay does not add to the next one's.
func readInto(lane chan<- chunk, dst, src net.Conn, oneWay time.Duration) {
	for {
		buf := chunkBufs.Get().([]byte)
		n, err := src.Read(buf)
		if n > 0 {
			lane <- chunk{buf: buf[:n], due: time.Now().Add(oneWay), dst: dst, src: src}
		} else {
			chunkBufs.Put(buf)
		}
		if err != nil {
			lane <- chunk{due: time.Now().Add(oneWay), dst: dst, src: src}
			return
		}
	}
}

// writeLane writes each chunk of lane when it is due. Go's timers sleep at least about a
// millisecond on an idle Linux machine (the netpoller waits in whole milliseconds), four times
// the delay wanted: the writer sleeps in nanosleep on a thread of its own with a timer slack of
// 1 ns, which wakes within tens of microseconds.
func writeLane(lane <-chan chunk) {
	runtime.LockOSThread()
	_, _, _ = syscall.Syscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	for c := range lane {
		if d := time.Until(c.due); d > 0 {
			ts := syscall.NsecToTimespec(d.Nanoseconds())
			_ = syscall.Nanosleep(&ts, nil)
		}
		if c.buf == nil {
			_ = c.dst.Close()
			_ = c.src.Close()
			continue
		}
		if _, err := c.dst.Write(c.buf); err != nil {
			_ = c.src.Close()
		}
		chunkBufs.Put(c.buf[:cap(c.buf)])
	}
}

const prSetTimerSlack = 29 // PR_SET_TIMERSLACK, linux/prctl.h

// delayLine is a running delay line process.
type delayLine struct {
	addr    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies *bufio.Reader // the process's stdout after its address: probe results
}

// startDelayLine starts lockbench again as a delay line in front of upstream, with oneWay in
// each direction (the round trip grows by twice that).
func startDelayLine(upstream string, oneWay time.Duration) (*delayLine, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-delay-line-serve", upstream, "-delay-line-one-way", oneWay.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	replies := bufio.NewReader(stdout)
	line, err := replies.ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("delay line: no address: %w", err)
	}
	return &delayLine{addr: strings.TrimSpace(line), cmd: cmd, stdin: stdin, replies: replies}, nil
}

func (d *delayLine) port() int { return portOf(d.addr) }

func (d *delayLine) stop() {
	_ = d.stdin.Close()
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	var n int
	_, _ = fmt.Sscanf(p, "%d", &n)
	return n
}

// pingRTT is the median round trip of n PINGs, one at a time, to addr.
func pingRTT(ctx context.Context, addr string, n int) (time.Duration, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return 0, err
	}
	rtts := make([]time.Duration, n)
	for i := range rtts {
		start := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			return 0, err
		}
		rtts[i] = time.Since(start)
	}
	slices.Sort(rtts)
	return rtts[n/2], nil
}
