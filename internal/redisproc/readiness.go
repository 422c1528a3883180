package redisproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// readyTimeout bounds how long a fresh server may take to answer its first PING.
const readyTimeout = 10 * time.Second

// logTailBytes is how much of the server's log a start failure quotes.
const logTailBytes = 500

// waitReady polls the server until it answers, exits, ctx ends or readyTimeout passes.
func (p *Process) waitReady(ctx context.Context, exited chan error) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		// An exit is looked for first: when the port was taken, another server answers on it.
		select {
		case err := <-exited:
			exited <- err // launch's caller waits on it
			return fmt.Errorf("redis-server exited at start (%v): %s", err, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if p.ready() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within %s: %s", p.Addr(), readyTimeout, p.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ready speaks RESP directly so that readiness does not depend on client configuration
// (ACLs, passwords): any reply, even NOAUTH, proves the server is accepting commands. A TLS-only
// server is ready once it accepts TCP connections.
func (p *Process) ready() error {
	conn, err := net.DialTimeout("tcp", p.Addr(), 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	if p.cfg.TLSOnly {
		return nil
	}
	_ = conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-LOADING") {
		return errors.New("loading")
	}
	return nil
}

// logTail is the end of the server's log on one line (lines joined by " | "), for the error of a
// failed start.
func (p *Process) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, "redis.log"))
	text := strings.TrimSpace(string(b))
	if len(text) > logTailBytes {
		text = text[len(text)-logTailBytes:]
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " | ")
}
