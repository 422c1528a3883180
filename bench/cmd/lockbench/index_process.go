package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// An index in a process of its own: -lock-own-cost runs every attached index so, in this
// binary or in a -lock-own-before one (the same bench built against another checkout of the
// collectors), so that the two versions' indexes are measured alike in one run. The parent
// readies the server (indexVariant.prepare) and talks to the child over its stdin and stdout,
// one line each way: the child says "ready" once its index serves; "scrape" asks for a scrape,
// answered "ok" or "error: …"; stdin closing stops the index and the child.

const (
	indexReady  = "ready"
	indexScrape = "scrape"
	indexOK     = "ok"
)

// serveIndex is the child: the index of the variant named mode on addr, its backstop walk at
// backstopPace (negative: none), served over in and out until in closes.
func serveIndex(in io.Reader, out io.Writer, addr, mode string, backstopPace int) error {
	v, ok := variantOf(mode)
	if !ok {
		return fmt.Errorf("no index variant %q", mode)
	}
	ctx := context.Background()
	a, err := startIndex(ctx, addr, v, backstopPace)
	if err != nil {
		return err
	}
	defer a.stop()
	fmt.Fprintln(out, indexReady)
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		if lines.Text() != indexScrape {
			return fmt.Errorf("unknown request %q", lines.Text())
		}
		if err := a.scrape(ctx, -1); err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
			continue
		}
		fmt.Fprintln(out, indexOK)
	}
	return lines.Err()
}

// indexProcess is the parent's handle on a child serving an index.
type indexProcess struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies *bufio.Scanner
}

// startIndexProcess starts bin serving v's index on addr and waits until it serves. The server
// must be readied for v (prepare).
func startIndexProcess(bin, addr string, v indexVariant, backstopPace int) (*indexProcess, error) {
	cmd := exec.Command(bin, "-serve-index", addr, "-serve-index-mode", v.mode,
		"-serve-index-backstop", strconv.Itoa(backstopPace))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	p := &indexProcess{cmd: cmd, stdin: stdin, replies: bufio.NewScanner(stdout)}
	if err := p.expect(indexReady); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s, %s: %w", bin, v.mode, err)
	}
	return p, nil
}

// scrape has the child scrape its index once and check that it served.
func (p *indexProcess) scrape() error {
	if _, err := fmt.Fprintln(p.stdin, indexScrape); err != nil {
		return err
	}
	return p.expect(indexOK)
}

// expect reads the child's next line and fails unless it is want.
func (p *indexProcess) expect(want string) error {
	if !p.replies.Scan() {
		return errors.Join(errors.New("the index process ended"), p.replies.Err())
	}
	if got := p.replies.Text(); got != want {
		return errors.New(strings.TrimPrefix(got, "error: "))
	}
	return nil
}

// stop closes the child's stdin, which stops its index, and waits for it to exit.
func (p *indexProcess) stop() error {
	p.stdin.Close()
	return p.cmd.Wait()
}
