package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

// Scope is what Serve scans: a validated configuration (its Redis, scan settings, namespaces and
// targets) and whether the metrics path scans a Redis of its own (see Options.TargetsOnly). A
// reload replaces it whole.
type Scope struct {
	Config      exporterconfig.Config
	TargetsOnly bool
}

// generation is everything built from one Scope: the redis section's scanner, the targets, and
// the handlers that serve them. A reload builds a new generation beside the serving one and
// swaps it in; the old one is closed when the last request that started on it ends, so a scrape
// in flight finishes on the scanners it began with.
type generation struct {
	scope        Scope
	metrics      http.Handler // the metrics path: the scan and the static metrics
	scrape       http.Handler // /scrape?target=NAME; nil without targets
	landing      http.Handler // "/"; nil when the metrics path is "/"
	targetNames  []string
	writeTimeout time.Duration // the scan timeout plus the margin for writing the answer
	close        func()

	// Guarded by liveGeneration.mu.
	requests int  // requests being served by this generation
	retired  bool // no longer the live generation: close when requests reaches 0
}

// generationDeps are what every generation shares: the registry of the exporter's own metrics,
// the scanners (kept across reloads while their settings stay), the scan-slot cap, and what
// Serve was given.
type generationDeps struct {
	static   prometheus.Gatherer // build info, Go, process, reload and target metrics (and Extra)
	targets  *targetMetrics
	scanners *scanners
	limiter  *scanLimiter
	path     string
	limits   HTTPLimits
	logger   *slog.Logger
}

// newGeneration opens what scope describes. Clients dial on demand, so this costs no round trip.
func newGeneration(scope Scope, deps generationDeps) (*generation, error) {
	cfg := scope.Config
	if scope.TargetsOnly && len(cfg.Targets) == 0 {
		return nil, errNoTargets
	}
	scanner, closeScanner, err := newDefaultScanner(scope, deps.scanners, deps.logger)
	if err != nil {
		return nil, err
	}
	targets, err := newTargetSet(cfg, deps.scanners, deps.logger)
	if err != nil {
		closeScanner()
		return nil, err
	}
	g := &generation{
		scope:        scope,
		targetNames:  targets.order,
		writeTimeout: scanTimeoutOrDefault(time.Duration(cfg.Scan.Timeout)) + deps.limits.WriteMargin,
		close: func() {
			closeScanner()
			targets.Close()
		},
	}
	ceiling, offset := time.Duration(cfg.Scan.Timeout), time.Duration(cfg.Scan.TimeoutOffset)
	g.metrics = &metricsHandler{scanner: scanner, static: deps.static, ceiling: ceiling, offset: offset, logger: deps.logger}
	if len(targets.order) > 0 {
		g.scrape = &targetHandler{
			targets: targets,
			limiter: deps.limiter,
			metrics: deps.targets,
			ceiling: ceiling,
			offset:  offset,
			logger:  deps.logger,
		}
	}
	if deps.path != "/" {
		landing, err := newLandingPage(deps.path, targets)
		if err != nil {
			g.close()
			return nil, fmt.Errorf("landing page: %w", err)
		}
		g.landing = landing
	}
	return g, nil
}

// newDefaultScanner scans the redis section's Redis for the metrics path, with the scanner of
// the previous generation when its settings did not change; with Scope.TargetsOnly there is
// none (nil) and the metrics path serves the exporter's own metrics only. The returned func
// gives it back.
func newDefaultScanner(scope Scope, pool *scanners, logger *slog.Logger) (*collectors.Scanner, func(), error) {
	if scope.TargetsOnly {
		return nil, func() {}, nil
	}
	sh, err := pool.get("redis", scope.Config, func() (redis.UniversalClient, *collectors.Scanner, error) {
		client, err := scope.Config.NewClient()
		if err != nil {
			return nil, nil, err
		}
		scanOpts := scope.Config.ScannerOptions()
		scanOpts.Logger = logger
		// A namespace declared without the type of its locks otherwise reports lock_keys 0 and
		// nothing else. Targets go without: their scans run only under the targets' scan cap.
		scanOpts.ReportUncountedTypes = true
		scanner, err := collectors.NewScanner(client, scanOpts)
		if err != nil {
			client.Close()
			return nil, nil, err
		}
		go warnIfClusterNode(client, logger, "--redis.addr", scope.Config.Redis.Addr)
		return client, scanner, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sh.scanner, func() { pool.put(sh) }, nil
}

// clusterCheckTimeout bounds the one INFO that tells whether an addr is a Cluster node.
const clusterCheckTimeout = 5 * time.Second

// warnIfClusterNode logs once, for a new client of one Redis, when that Redis is a node of a
// Redis Cluster: the scans then count that node's keys only (see exporterconfig.IsClusterNode).
// It runs beside the start-up; a client closed meanwhile (a reload) ends it at once.
func warnIfClusterNode(client redis.UniversalClient, logger *slog.Logger, setting, addr string) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterCheckTimeout)
	defer cancel()
	if exporterconfig.IsClusterNode(ctx, client) {
		logger.Warn("Redis at "+setting+" "+exporterconfig.ClusterNodeHint, "redis", exporterconfig.RedactAddr(addr))
	}
}

// scrapeOrFallback serves /scrape: the targets' handler, or without targets what "/" serves
// (the landing page, or the metrics when they are served on "/"), as if /scrape were not routed.
func (g *generation) scrapeOrFallback() http.Handler {
	switch {
	case g.scrape != nil:
		return g.scrape
	case g.landing != nil:
		return g.landing
	}
	return g.metrics
}

// liveGeneration is the generation requests are served by, with the bookkeeping that closes a
// replaced one only after its last request.
type liveGeneration struct {
	mu  sync.Mutex
	gen *generation // nil once retired at shutdown
}

// acquire returns the live generation for one request, and release must follow; nil once the
// last generation is retired (a request that slipped past a failed server's shutdown).
func (l *liveGeneration) acquire() *generation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != nil {
		l.gen.requests++
	}
	return l.gen
}

// release ends a request served by g, closing g when it was its last and g has been replaced.
func (l *liveGeneration) release(g *generation) {
	l.mu.Lock()
	g.requests--
	closeNow := g.retired && g.requests == 0
	l.mu.Unlock()
	if closeNow {
		g.close()
	}
}

// swap makes next the live generation and retires the previous one; nil retires it for good
// (shutdown, when no request can start any more).
func (l *liveGeneration) swap(next *generation) {
	l.mu.Lock()
	prev := l.gen
	l.gen = next
	prev.retired = true
	closeNow := prev.requests == 0
	l.mu.Unlock()
	if closeNow {
		prev.close()
	}
}

// current is the live generation's scope, for logging.
func (l *liveGeneration) current() Scope {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen.scope
}

// handler serves each request with the generation live when it started, chosen by pick, and
// gives it that generation's write deadline (the scan timeout may change on reload, the
// server's WriteTimeout cannot).
func (l *liveGeneration) handler(pick func(*generation) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := l.acquire()
		if g == nil {
			http.Error(w, "lock-exporter is shutting down", http.StatusServiceUnavailable)
			return
		}
		defer l.release(g)
		// Not every ResponseWriter supports deadlines; the server's WriteTimeout then applies.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(g.writeTimeout))
		pick(g).ServeHTTP(w, r)
	})
}
