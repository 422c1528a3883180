package redisproc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrBadMonitor is returned by Start when Config.Sentinel does not name a master to monitor.
var ErrBadMonitor = errors.New("sentinel monitor needs a master name and a host:port")

// sentinelConfFile is the Sentinel's configuration file in its directory. Sentinel insists on a
// writable file given as its first argument: it records its own state there.
const sentinelConfFile = "sentinel.conf"

// Monitor is the master a Sentinel watches, under the name clients ask it for.
type Monitor struct {
	// Name is the master's name for clients, e.g. "locks".
	Name string
	// MasterAddr is the master's host:port.
	MasterAddr string
	// DownAfter is how long the master may go unanswered before the Sentinel deems it down.
	// Zero keeps Redis's default (30s).
	DownAfter time.Duration
}

// validate catches what would otherwise surface as a Sentinel refusing its configuration file.
func (m Monitor) validate() error {
	if m.Name == "" || strings.ContainsFunc(m.Name, unicode.IsSpace) {
		return fmt.Errorf("%w: name %q", ErrBadMonitor, m.Name)
	}
	host, port, err := net.SplitHostPort(m.MasterAddr)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: master %q", ErrBadMonitor, m.MasterAddr)
	}
	return nil
}

// conf is the Sentinel's configuration: one master, quorum 1 since this Sentinel is alone.
func (m Monitor) conf() string {
	host, port, _ := net.SplitHostPort(m.MasterAddr)
	text := fmt.Sprintf("sentinel monitor %s %s %s 1\n", m.Name, host, port)
	if m.DownAfter > 0 {
		text += fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", m.Name, m.DownAfter.Milliseconds())
	}
	return text
}

// writeSentinelConf writes a fresh configuration file before each launch, so that a restarted
// Sentinel starts from its monitor alone, as a restarted server starts from an empty dataset,
// and returns the arguments that must lead the command line.
func (p *Process) writeSentinelConf() ([]string, error) {
	path := filepath.Join(p.cfg.Dir, sentinelConfFile)
	if err := os.WriteFile(path, []byte(p.cfg.Sentinel.conf()), 0o600); err != nil {
		return nil, fmt.Errorf("write sentinel configuration: %w", err)
	}
	return []string{path, "--sentinel"}, nil
}
