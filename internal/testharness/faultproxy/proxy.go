// Package faultproxy is a TCP proxy for fault-injection tests: it sits between a client and a
// real server on loopback and can add latency, swallow traffic (blackhole) or reset connections,
// then heal, while both ends keep running for real.
package faultproxy

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Mode is what the proxy does to traffic.
type Mode int

const (
	// Pass forwards bytes unchanged.
	Pass Mode = iota
	// Delay holds every chunk for the configured latency before forwarding it.
	Delay
	// Blackhole accepts connections and reads what clients send, but forwards nothing in
	// either direction: calls hang until the client's own timeout, as behind a dead link.
	Blackhole
	// Reset closes every open connection with a TCP RST and resets new ones on accept.
	Reset
)

// Proxy forwards a loopback port to a target address.
type Proxy struct {
	// Addr is the proxy's own host:port; point the client under test at it.
	Addr string

	target string
	ln     net.Listener

	mu      sync.Mutex
	mode    Mode
	latency time.Duration
	conns   map[net.Conn]struct{}
	changed chan struct{} // closed and replaced on every mode change, to wake delayed chunks
	closed  bool

	wg sync.WaitGroup
}

// Start listens on a free loopback port and forwards to target until the test ends.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("faultproxy: listen: %v", err)
	}
	p := &Proxy{
		Addr:    ln.Addr().String(),
		target:  target,
		ln:      ln,
		conns:   make(map[net.Conn]struct{}),
		changed: make(chan struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// SetLatency delays each forwarded chunk by d (in both directions).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
	p.setMode(Delay)
}

// Blackhole stops forwarding in both directions without closing anything.
func (p *Proxy) Blackhole() { p.setMode(Blackhole) }

// Reset drops every open connection with RST and keeps resetting new ones until Heal.
func (p *Proxy) Reset() {
	p.setMode(Reset)
	p.mu.Lock()
	for c := range p.conns {
		abort(c)
	}
	p.mu.Unlock()
}

// Heal returns to plain forwarding; connections stalled by a blackhole resume.
func (p *Proxy) Heal() { p.setMode(Pass) }

// Mode reports the current mode.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

func (p *Proxy) setMode(m Mode) {
	p.mu.Lock()
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// Close stops listening, closes every connection and waits for all proxy goroutines.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.Mode() == Reset {
			abort(client)
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			abort(client)
			continue
		}
		if !p.track(client, server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(client, server)
		go p.pipe(server, client)
	}
}

// track registers both ends; it reports false when the proxy is already closing.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) forget(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

// pipe copies src to dst chunk by chunk, applying the mode in force when each chunk arrives.
func (p *Proxy) pipe(src, dst net.Conn) {
	defer p.wg.Done()
	defer func() {
		_ = src.Close()
		_ = dst.Close()
		p.forget(src, dst)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.forward(dst, buf[:n]) {
			return
		}
		if err != nil {
			return
		}
	}
}

// forward writes chunk to dst under the current mode; false means the connection is finished.
func (p *Proxy) forward(dst net.Conn, chunk []byte) bool {
	for {
		p.mu.Lock()
		mode, latency, changed := p.mode, p.latency, p.changed
		p.mu.Unlock()
		switch mode {
		case Reset:
			return false
		case Blackhole:
			// Swallow this chunk: the peer never sees it, as on a link that drops packets.
			// Later chunks are judged by the mode in force when they arrive.
			return true
		case Delay:
			select {
			case <-time.After(latency):
			case <-changed:
				continue
			}
		}
		_, err := dst.Write(chunk)
		return err == nil
	}
}

// abort closes c with an RST instead of a FIN, as a crashed peer or middlebox would.
func abort(c net.Conn) {
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Close()
}
