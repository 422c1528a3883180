package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The delay line adds a fixed delay to every chunk, but what a library's round trip grows by
// under load also depends on how busy the line, Redis and the machine are while it runs: a
// library that sends many small chunks keeps them busier than one that sends a few large ones.
// The PING check before each round measures the line idle; a probe measures it while a variant
// runs. It runs inside the delay line's process, dialled through the line's own listener, so
// that its PINGs wait behind the variant's traffic in the line and in Redis, and none of its
// CPU time or allocations lands in the measured process.

// probeEvery is the pause between a probe's PINGs: about 200 per one-second run, too few to
// load the line and enough for a median.
const probeEvery = 5 * time.Millisecond

// Probe commands, one line each on the delay line's stdin; "end" is answered with the median
// round trip in nanoseconds (0 when no PING finished), one line on its stdout.
const (
	probeStart = "probe"
	probeEnd   = "end"
)

// serveProbes reads probe commands from in until it closes, PINGing addr (the line itself)
// between a "probe" and its "end".
func serveProbes(in io.Reader, out io.Writer, addr string) {
	var stop func() time.Duration
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		switch strings.TrimSpace(lines.Text()) {
		case probeStart:
			if stop == nil {
				stop = pingLine(addr)
			}
		case probeEnd:
			var rtt time.Duration
			if stop != nil {
				rtt, stop = stop(), nil
			}
			fmt.Fprintln(out, rtt.Nanoseconds())
		}
	}
	if stop != nil {
		stop()
	}
}

// pingLine PINGs addr every probeEvery on a connection of its own until the returned func is
// called, which returns the median round trip.
func pingLine(addr string) (stop func() time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []time.Duration)
	go func() {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
		defer c.Close()
		var rtts []time.Duration
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			start := time.Now()
			if err := c.Ping(ctx).Err(); err == nil {
				rtts = append(rtts, time.Since(start))
			}
			select {
			case <-ctx.Done():
				done <- rtts
				return
			case <-tick.C:
			}
		}
	}()
	return func() time.Duration {
		cancel()
		rtts := <-done
		if len(rtts) == 0 {
			return 0
		}
		return medianDuration(rtts)
	}
}

// startProbe asks the line to start probing itself.
func (d *delayLine) startProbe() error {
	_, err := fmt.Fprintln(d.stdin, probeStart)
	return err
}

// endProbe stops the probe and returns the median round trip it measured (0 when no PING
// finished).
func (d *delayLine) endProbe() (time.Duration, error) {
	if _, err := fmt.Fprintln(d.stdin, probeEnd); err != nil {
		return 0, err
	}
	line, err := d.replies.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("delay line probe: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("delay line probe: %q: %w", line, err)
	}
	return time.Duration(ns), nil
}
