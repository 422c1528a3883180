package drills

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// audit proves that owner tokens never leak. Tokens are capabilities and lease never exports
// them, so a drill learns each token the way only an operator with full Redis access could: it
// GETs the lock key while the lease is held. When the drill ends, every text it watched (worker
// logs, /metrics expositions, exporter logs and inspect output, errors returned to callers) is
// searched for every token it learnt.
type audit struct {
	mu      sync.Mutex
	tokens  map[string]string // token → lock key, for the failure message
	sources []source
}

type source struct {
	name string
	text func() (string, error)
}

func newAudit(t *testing.T) *audit {
	a := &audit{tokens: make(map[string]string)}
	a.watchLogs("go-redis log", redisLog)
	t.Cleanup(func() { a.check(t) })
	return a
}

// learn reads the token that holds key now and remembers it.
func (a *audit) learn(t *testing.T, rdb redis.Cmdable, key string) string {
	t.Helper()
	tok, err := rdb.Get(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("audit: GET %q: %v", key, err)
	}
	a.add(tok, key)
	return tok
}

func (a *audit) add(token, key string) {
	a.mu.Lock()
	a.tokens[token] = key
	a.mu.Unlock()
}

// count is the number of tokens learnt.
func (a *audit) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tokens)
}

func (a *audit) watch(name string, text func() (string, error)) {
	a.mu.Lock()
	a.sources = append(a.sources, source{name, text})
	a.mu.Unlock()
}

func (a *audit) watchLogs(name string, b *testkit.SyncBuffer) {
	a.watch(name, func() (string, error) { return b.String(), nil })
}

func (a *audit) watchRegistry(name string, reg prometheus.Gatherer) {
	a.watch(name, func() (string, error) { return exposition(reg) })
}

// text records a text seen during the drill (an error message, a scrape, command output).
func (a *audit) text(name, s string) {
	a.watch(name, func() (string, error) { return s, nil })
}

// err records an error returned to a caller; nil is ignored.
func (a *audit) err(name string, err error) {
	if err != nil {
		a.text(name, err.Error())
	}
}

func (a *audit) check(t *testing.T) {
	t.Helper()
	leaks, texts := a.leaks()
	for _, l := range leaks {
		t.Error(l)
	}
	t.Logf("token audit: %d tokens searched for in %d texts: %d found", a.count(), texts, len(leaks))
}

// leaks searches every watched text for every learnt token.
func (a *audit) leaks() (found []string, texts int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokens) == 0 {
		return []string{"audit: the drill learnt no token, so it proves nothing about leaks"}, 0
	}
	for _, s := range a.sources {
		text, err := s.text()
		if err != nil {
			found = append(found, fmt.Sprintf("audit: read %s: %v", s.name, err))
			continue
		}
		texts++
		for tok, key := range a.tokens {
			if strings.Contains(text, tok) {
				found = append(found, fmt.Sprintf("audit: the owner token of %q appears in %s", key, s.name))
			}
		}
	}
	return found, texts
}

// TestAuditFindsAPlantedToken shows the audit is able to fail: a token planted in a log line,
// in a metric label and in an error is reported each time.
func TestAuditFindsAPlantedToken(t *testing.T) {
	a := &audit{tokens: map[string]string{"T0kenT0kenT0kenT0ken00": "job:1"}}
	logs := &testkit.SyncBuffer{}
	_, _ = logs.Write([]byte("level=WARN msg=x token=T0kenT0kenT0kenT0ken00\n"))
	a.watchLogs("log", logs)
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "x", Help: "x"}, []string{"key"})
	g.WithLabelValues("T0kenT0kenT0kenT0ken00").Set(1)
	reg.MustRegister(g)
	a.watchRegistry("metrics", reg)
	a.err("error", errors.New("release failed for T0kenT0kenT0kenT0ken00"))
	a.text("clean", "nothing here")
	found, texts := a.leaks()
	if len(found) != 3 || texts != 4 {
		t.Fatalf("leaks() = %q in %d texts, want 3 leaks in 4 texts", found, texts)
	}
}
