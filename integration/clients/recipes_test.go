package clients_test

import (
	"bufio"
	"context"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// recipe is one section of docs/recipes.md: its heading and its configuration block.
type recipe struct {
	heading, config string
	name, pattern   string
	types           []string
}

var (
	recipeHeading = regexp.MustCompile(`(?m)^## (.+)$`)
	recipeYAML    = regexp.MustCompile("(?s)```yaml\n(.*?)```")
	recipeField   = regexp.MustCompile(`(?m)^\s*-?\s*(name|pattern|types):\s*(.+)$`)
)

// readRecipes parses docs/recipes.md: one configuration block of one namespace per section.
func readRecipes(t *testing.T) map[string]recipe {
	t.Helper()
	root, err := testkit.FindRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "recipes.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]recipe{}
	heads := recipeHeading.FindAllStringSubmatchIndex(string(doc), -1)
	for i, h := range heads {
		end := len(doc)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		section := string(doc[h[1]:end])
		blocks := recipeYAML.FindAllStringSubmatch(section, -1)
		if len(blocks) != 1 {
			t.Fatalf("recipe %q has %d yaml blocks, want 1", doc[h[2]:h[3]], len(blocks))
		}
		r := recipe{heading: string(doc[h[2]:h[3]]), config: blocks[0][1]}
		for _, f := range recipeField.FindAllStringSubmatch(r.config, -1) {
			v := strings.Trim(strings.TrimSpace(f[2]), `"`)
			switch f[1] {
			case "name":
				r.name = v
			case "pattern":
				r.pattern = v
			case "types":
				r.types = strings.Split(strings.Trim(v, "[]"), ", ")
			}
		}
		out[r.heading] = r
	}
	return out
}

// recipeLocks makes, with each client (or its replay), the locks its recipe's pattern should
// count, some without expiry where the client allows it, and companion keys it should not.
var recipeLocks = map[string]func(t *testing.T, addr string, rdb *redis.Client){
	"Redisson": func(t *testing.T, addr string, _ *redis.Client) {
		driveClient(t, addr, clients.Redisson, map[string]time.Duration{"orders:lock:1": 0, "orders:lock:2": 20 * time.Second})
	},
	"redis-py Lock": func(t *testing.T, addr string, _ *redis.Client) {
		driveClient(t, addr, clients.RedisPy, map[string]time.Duration{"reports:lock:a": time.Minute, "reports:lock:b": 0})
	},
	"python-redis-lock": func(t *testing.T, _ string, rdb *redis.Client) {
		p := clients.NewPythonRedisLock(rdb)
		for name, expire := range map[string]time.Duration{"a": time.Minute, "b": 0, "released": time.Minute} {
			id, ok, err := p.Acquire(t.Context(), name, expire)
			if err != nil || !ok {
				t.Fatalf("python-redis-lock acquire %s: %v %v", name, ok, err)
			}
			if name == "released" { // leaves lock-signal:released, a list outside the pattern
				if err := p.Release(t.Context(), name, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	},
	"node-redlock": func(t *testing.T, addr string, _ *redis.Client) {
		driveClient(t, addr, clients.Redlock, map[string]time.Duration{"payments:lock:1": 10 * time.Second, "payments:lock:2": 10 * time.Second})
	},
	"redis-semaphore": func(t *testing.T, addr string, _ *redis.Client) {
		driveClient(t, addr, clients.RedisSemaphore, map[string]time.Duration{"jobs-a": 10 * time.Second, "jobs-b": 10 * time.Second})
	},
	"ShedLock": func(t *testing.T, _ string, rdb *redis.Client) {
		s := clients.NewShedLock(rdb, "default")
		for _, name := range []string{"report", "cleanup"} {
			if _, ok, err := s.Lock(t.Context(), name, 10*time.Minute); err != nil || !ok {
				t.Fatalf("shedlock lock %s: %v %v", name, ok, err)
			}
		}
		// A task that ended inside its lockAtLeastFor: the key stays, with the rest of it as TTL.
		value, _, err := s.Lock(t.Context(), "short", 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Unlock(t.Context(), "short", value, time.Now(), 5*time.Minute); err != nil {
			t.Fatal(err)
		}
	},
	"Sidekiq unique jobs": func(t *testing.T, _ string, rdb *redis.Client) {
		s := clients.NewSidekiqUniqueJobs(rdb)
		for _, j := range []struct {
			hash, jid string
			ttl       time.Duration
		}{{"d41d8cd98f00b204", "jid-1", 0}, {"9e107d9d372bb682", "jid-2", time.Hour}, {"e4d909c290d0fb1c", "jid-3", 0}} {
			if ok, err := s.Lock(t.Context(), j.hash, j.jid, j.ttl); err != nil || !ok {
				t.Fatalf("sidekiq lock %s: %v %v", j.jid, ok, err)
			}
		}
		// A finished job: its :QUEUED list keeps a wake-up token for 5 s.
		if err := s.Unlock(t.Context(), "e4d909c290d0fb1c", "jid-3"); err != nil {
			t.Fatal(err)
		}
	},
}

// driveClient acquires each named lock with its lease (0: the client's default) through the
// real client, one holder per lock.
func driveClient(t *testing.T, addr string, kind clients.Kind, locks map[string]time.Duration) {
	t.Helper()
	r := clients.NewRunner(t, addr)
	d := clients.Start(t, kind, addr)
	for _, name := range slices.Sorted(maps.Keys(locks)) {
		if got := r.Holder(d, "holder-"+name).Acquire(name, locks[name]); got.Result != clients.Acquired {
			t.Fatalf("%s acquire %s: %v", kind, name, got)
		}
	}
}

// TestRecipes loads each recipe's configuration block from docs/recipes.md into the real
// exporter, against locks its client made, and checks the exporter's figures against a fresh
// SCAN + TYPE + PTTL walk of the recipe's pattern.
func TestRecipes(t *testing.T) {
	recipes := readRecipes(t)
	// Built before any lock is taken, so that the build's time does not run down their TTLs.
	recipeExporterBinary(t)
	if len(recipes) != len(recipeLocks) {
		t.Errorf("docs/recipes.md has %d recipes, the test drives %d", len(recipes), len(recipeLocks))
	}
	for heading, makeLocks := range recipeLocks {
		t.Run(heading, func(t *testing.T) {
			rc, ok := recipes[heading]
			if !ok {
				t.Fatalf("docs/recipes.md has no section %q", heading)
			}
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			rdb.HSet(t.Context(), "app:cache:user:1", "name", "not a lock")
			makeLocks(t, srv.Addr, rdb)

			config := testkit.WriteFile(t, "exporter.yml", rc.config)
			exp := startRecipeExporter(t, "--redis.addr", srv.Addr, "--config.file", config)
			start := time.Now()
			metrics := exp.scrape(t)
			want := walkPattern(t, rdb, rc)
			elapsed := time.Since(start).Seconds()
			checkRecipe(t, rc, metrics, want, elapsed)
			if slices.Contains(rc.types, "hash") {
				checkTypeHint(t, srv.Addr, rc, want.keys)
			}
		})
	}
}

// checkTypeHint runs the exporter with the recipe's namespace declared without its types, as
// --namespace NAME=PATTERN alone: the look at start must find the client's hash locks and
// report them, where lock_keys says 0.
func checkTypeHint(t *testing.T, addr string, rc recipe, hashes int) {
	t.Helper()
	exp := startRecipeExporter(t, "--redis.addr", addr, "--namespace", rc.name+"="+rc.pattern)
	series := `lock_exporter_namespace_uncounted_keys{lock_namespace="` + rc.name + `",type="hash"}`
	var got float64
	testkit.Eventually(t, 30*time.Second, "the look to report "+series, func() bool {
		var ok bool
		got, ok = exp.scrape(t)[series]
		return ok
	})
	if got != float64(hashes) {
		t.Errorf("%s = %v, the walk found %d hash locks", series, got, hashes)
	}
}

// walked is what a fresh walk of a recipe's pattern finds.
type walked struct {
	keys, withoutTTL int
	ttlMin           float64 // seconds; +Inf when no key has a TTL
}

func walkPattern(t *testing.T, rdb *redis.Client, rc recipe) walked {
	t.Helper()
	types := rc.types
	if len(types) == 0 {
		types = []string{"string"}
	}
	w := walked{ttlMin: math.Inf(1)}
	iter := rdb.Scan(t.Context(), 0, rc.pattern, 100).Iterator()
	for iter.Next(t.Context()) {
		key := iter.Val()
		if !slices.Contains(types, rdb.Type(t.Context(), key).Val()) {
			continue
		}
		w.keys++
		switch pttl := rdb.PTTL(t.Context(), key).Val(); {
		case pttl == -1:
			w.withoutTTL++
		case pttl > 0:
			w.ttlMin = min(w.ttlMin, pttl.Seconds())
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return w
}

// checkRecipe compares the exporter with the walk that followed its scrape: counts equal, and
// the smallest TTL no smaller than the walk's (TTLs only fall) and no larger than the walk's
// plus the time from the scrape's start to the walk's end.
func checkRecipe(t *testing.T, rc recipe, m map[string]float64, w walked, elapsed float64) {
	t.Helper()
	if w.keys == 0 {
		t.Fatalf("the walk of %q found no lock: the client made none the recipe matches", rc.pattern)
	}
	sel := `{lock_namespace="` + rc.name + `"}`
	if got := m["lock_keys"+sel]; got != float64(w.keys) {
		t.Errorf("lock_keys = %v, the walk found %d", got, w.keys)
	}
	if got := m["lock_keys_without_ttl"+sel]; got != float64(w.withoutTTL) {
		t.Errorf("lock_keys_without_ttl = %v, the walk found %d", got, w.withoutTTL)
	}
	got, present := m["lock_key_ttl_min_seconds"+sel]
	switch {
	case math.IsInf(w.ttlMin, 1) && present:
		t.Errorf("lock_key_ttl_min_seconds = %v, no key has a TTL", got)
	case !math.IsInf(w.ttlMin, 1) && (!present || got < w.ttlMin-0.01 || got > w.ttlMin+elapsed+0.01):
		t.Errorf("lock_key_ttl_min_seconds = %v (present %v), want within [%v, %v]", got, present, w.ttlMin, w.ttlMin+elapsed)
	}
	t.Logf("%s: lock_keys %d, without TTL %d, TTL min %.3fs (exporter %.3fs)", rc.heading, w.keys, w.withoutTTL, w.ttlMin, got)
}

var (
	recipeBuild  sync.Once
	recipeBinary string
	recipeErr    error
)

type recipeExporter struct{ base string }

// recipeExporterBinary builds the lock-exporter binary once per test run.
func recipeExporterBinary(t *testing.T) string {
	t.Helper()
	recipeBuild.Do(func() {
		dir, err := os.MkdirTemp("", "lockwatch-recipes-")
		if err != nil {
			recipeErr = err
			return
		}
		recipeBinary, recipeErr = testkit.Build(dir, "./cmd/lock-exporter")
	})
	if recipeErr != nil {
		t.Fatal(recipeErr)
	}
	return recipeBinary
}

// startRecipeExporter runs the lock-exporter binary until the test ends.
func startRecipeExporter(t *testing.T, args ...string) recipeExporter {
	t.Helper()
	bin := recipeExporterBinary(t)
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logs := &testkit.SyncBuffer{}
	cmd := exec.Command(bin, append([]string{"--web.listen-address", addr}, args...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("exporter log:\n%s", logs.String())
		}
	})
	testkit.Eventually(t, 20*time.Second, "the exporter to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return recipeExporter{base: "http://" + addr}
}

// scrape reads /metrics into series → value (series written as the exposition writes them).
func (e recipeExporter) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return parseExposition(t, resp.Body)
}

func parseExposition(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("exposition line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
