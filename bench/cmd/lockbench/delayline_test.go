package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// The delay line adds its delay to a round trip once per direction, and chunks in flight at
// once overlap instead of queueing behind each other's delay, on one connection and across
// connections: internal/testharness/faultproxy delays each chunk in turn, which is why
// lockbench has its own. With a 20 ms one-way delay, one PING takes at least 40 ms more than
// direct; 8 PINGs written 5 ms apart on one connection are each answered about one round trip
// after they were written (in turn, the last would wait for every earlier chunk's delay); and
// 16 PINGs on 16 connections at once finish together in about one round trip.
func TestDelayLineAddsOneRoundTripAndOverlaps(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const oneWay = 20 * time.Millisecond
	served := make(chan struct{})
	go func() { runDelayLine(ln, srv.Addr(), oneWay); close(served) }()
	defer func() { _ = ln.Close(); <-served }()

	ctx := context.Background()
	rtt, err := pingRTT(ctx, ln.Addr().String(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if rtt < 2*oneWay || rtt > 2*oneWay+time.Second {
		t.Errorf("PING through the line took %s, want 2 × %s and a little more", rtt, oneWay)
	}

	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	const pings, gap = 8, 5 * time.Millisecond
	var lastWrite atomic.Int64 // UnixNano
	go func() {
		for range pings {
			lastWrite.Store(time.Now().UnixNano())
			if _, err := raw.Write([]byte("PING\r\n")); err != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
	reply := make([]byte, 0, 7*pings)
	buf := make([]byte, 64)
	for len(reply) < 7*pings {
		n, err := raw.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		reply = append(reply, buf[:n]...)
	}
	// The writer wrote its last PING before the last reply could come back.
	if after := time.Since(time.Unix(0, lastWrite.Load())); after > 4*oneWay {
		t.Errorf("the last of %d pipelined PINGs was answered %s after it was written, want about 2 × %s: the line delays chunks in turn", pings, after, oneWay)
	}

	const conns = 16
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), PoolSize: conns, MinIdleConns: conns})
	defer c.Close()
	var wg sync.WaitGroup
	for range conns { // dial every connection first
		wg.Go(func() { _ = c.Ping(ctx).Err() })
	}
	wg.Wait()
	start := time.Now()
	for range conns {
		wg.Go(func() {
			if err := c.Ping(ctx).Err(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > 8*oneWay {
		t.Errorf("%d PINGs at once took %s, want about one round trip (2 × %s): the line serialises chunks", conns, took, oneWay)
	}
}

// The probe protocol: "probe" starts PINGs through the line, "end" answers their median round
// trip (at least the two one-way delays), an "end" with no probe answers 0, and closing the
// input stops the line.
func TestDelayLineProbe(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	const oneWay = 10 * time.Millisecond
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- serveDelayLine(inR, outW, srv.Addr(), oneWay); _ = outW.Close() }()
	line := &delayLine{stdin: inW, replies: bufio.NewReader(outR)}
	addr, err := line.replies.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := net.SplitHostPort(strings.TrimSpace(addr)); err != nil {
		t.Fatalf("first line %q is not the line's address: %v", addr, err)
	}

	if rtt, err := line.endProbe(); err != nil || rtt != 0 {
		t.Errorf("end without a probe = %s, %v; want 0", rtt, err)
	}
	if err := line.startProbe(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * probeEvery)
	rtt, err := line.endProbe()
	if err != nil {
		t.Fatal(err)
	}
	if rtt < 2*oneWay || rtt > 2*oneWay+time.Second {
		t.Errorf("probe's median round trip %s, want 2 × %s and a little more", rtt, oneWay)
	}

	_ = inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the line did not stop when its input closed")
	}
}
