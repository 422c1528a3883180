package exporter

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of the connection and request caps, as Prometheus' --web.max-connections and
// node_exporter's --web.max-requests. Measured with the built binary (docs/exporter.md, Memory
// bounds): an idle connection costs about 17 KiB and a scrape waiting on a paused Redis about
// 70 KiB, so 512 connections and 40 scrapes stay well inside the 128Mi the manifests allow.
const (
	DefaultMaxConnections = 512
	DefaultMaxRequests    = 40
)

// Reasons of lock_exporter_http_requests_refused_total.
const (
	refusedConnections = "max_connections"
	refusedRequests    = "max_requests"
)

// refusals counts what the caps turned away.
type refusals struct{ byReason *prometheus.CounterVec }

func newRefusals(reg prometheus.Registerer) refusals {
	r := refusals{byReason: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lock_exporter_http_requests_refused_total",
		Help: "Connections closed at accept because --web.max-connections were open (reason=max_connections), and scrapes answered 503 because --web.max-requests were in flight (reason=max_requests).",
	}, []string{"reason"})}
	reg.MustRegister(r.byReason)
	r.byReason.WithLabelValues(refusedConnections)
	r.byReason.WithLabelValues(refusedRequests)
	return r
}

// connCap counts the connections open across every listener, so that idle or silent clients
// cannot take the process's memory or file descriptors. At the cap, a new connection first
// evicts an idle keep-alive connection (one between requests, which the server would close
// after its idle timeout anyway, as Shutdown does), so that a crowd of idle clients cannot lock
// Prometheus out; only when none is idle is the new one closed and counted. Connections that
// never send a request are closed by the server's header timeout.
type connCap struct {
	max     int64
	open    atomic.Int64
	refused prometheus.Counter

	mu   sync.Mutex
	idle map[net.Conn]struct{} // connections between requests, from http.Server.ConnState
}

func newConnCap(max int, refused prometheus.Counter) *connCap {
	return &connCap{max: int64(max), refused: refused, idle: make(map[net.Conn]struct{})}
}

// connState is the http.Server's ConnState hook: it keeps the set of idle connections.
func (c *connCap) connState(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == http.StateIdle {
		c.idle[conn] = struct{}{}
	} else {
		delete(c.idle, conn)
	}
}

// evictIdle closes one idle connection; false when there is none.
func (c *connCap) evictIdle() bool {
	c.mu.Lock()
	var victim net.Conn
	for conn := range c.idle {
		victim = conn
		delete(c.idle, conn)
		break
	}
	c.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	return true
}

// limitListener applies c to l's connections.
func (c *connCap) limitListener(l net.Listener) net.Listener {
	return &cappedListener{Listener: l, cap: c}
}

type cappedListener struct {
	net.Listener
	cap *connCap
}

func (l *cappedListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.cap.open.Add(1) <= l.cap.max {
			return &cappedConn{Conn: conn, cap: l.cap}, nil
		}
		if l.cap.evictIdle() {
			// The evicted connection's place is given back by its Close; this one takes it.
			return &cappedConn{Conn: conn, cap: l.cap}, nil
		}
		l.cap.open.Add(-1)
		l.cap.refused.Inc()
		conn.Close()
	}
}

// cappedConn gives its place back on the first Close.
type cappedConn struct {
	net.Conn
	cap  *connCap
	once sync.Once
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.cap.open.Add(-1) })
	return err
}

// requestCap answers 503 to scrapes past max in flight, as promhttp's MaxRequestsInFlight does,
// so that scrapes piling up on a slow or paused Redis cannot grow memory without bound.
type requestCap struct {
	slots   chan struct{}
	refused prometheus.Counter
}

func newRequestCap(max int, refused prometheus.Counter) *requestCap {
	return &requestCap{slots: make(chan struct{}, max), refused: refused}
}

func (c *requestCap) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case c.slots <- struct{}{}:
			defer func() { <-c.slots }()
			h.ServeHTTP(w, r)
		default:
			c.refused.Inc()
			http.Error(w, "too many scrapes in flight (--web.max-requests); try again", http.StatusServiceUnavailable)
		}
	})
}
