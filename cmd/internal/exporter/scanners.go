package exporter

import (
	"reflect"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

// sharedScanner is a client and scanner that generations share while their settings stay the
// same, so that a reload does not start a second pass over a Redis beside the one in flight
// (concurrent scrapes of one scanner share its pass) nor give a target a second scan slot.
type sharedScanner struct {
	key      string
	settings exporterconfig.Config // what the scanner was built from
	client   redis.UniversalClient
	scanner  *collectors.Scanner
	// gate holds the global scan slot while any scrape of this target runs; see scanLimiter.
	gate targetGate
	refs int // generations using it; guarded by scanners.mu
}

// scanners hands out shared scanners by key (a target's name, or the redis section) and closes
// each when the last generation using it is closed.
type scanners struct {
	mu    sync.Mutex
	byKey map[string]*sharedScanner // the newest scanner of each key
}

func newScanners() *scanners { return &scanners{byKey: make(map[string]*sharedScanner)} }

// get returns the scanner of key when it was built from equal settings, else a new one from
// open, which replaces it for later generations (the old one lives on until the generations
// using it are closed). Password files and client certificates are read per connection, so
// equal settings mean the same connections. The scan-slot cap is not a scanner's setting.
func (p *scanners) get(key string, settings exporterconfig.Config, open func() (redis.UniversalClient, *collectors.Scanner, error)) (*sharedScanner, error) {
	settings.Scan.MaxConcurrentTargets = 0
	settings.Targets = nil
	p.mu.Lock()
	defer p.mu.Unlock()
	if sh := p.byKey[key]; sh != nil && reflect.DeepEqual(sh.settings, settings) {
		sh.refs++
		return sh, nil
	}
	client, scanner, err := open()
	if err != nil {
		return nil, err
	}
	sh := &sharedScanner{key: key, settings: settings, client: client, scanner: scanner, gate: newTargetGate(), refs: 1}
	p.byKey[key] = sh
	return sh, nil
}

// put ends one generation's use of sh, closing it with the last.
func (p *scanners) put(sh *sharedScanner) {
	p.mu.Lock()
	sh.refs--
	last := sh.refs == 0
	if last && p.byKey[sh.key] == sh {
		delete(p.byKey, sh.key)
	}
	p.mu.Unlock()
	if last {
		sh.scanner.Close()
		sh.client.Close()
	}
}
