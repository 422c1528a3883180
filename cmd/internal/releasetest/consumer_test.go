package releasetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxConsumerModules bounds `go list -m all` of a program that imports lease and observe
// close to what its direct dependencies cost anyway (the same program on go-redis,
// client_golang and the OTel metric API alone has 46), so lockwatch brings next to nothing
// of its own.
const maxConsumerModules = 48

// forbidden are modules a library consumer must never get through lockwatch: the Prometheus
// server, the dashboard SDK, the PostgreSQL driver, the exporter's web toolkit, the OTel SDK and
// exporters, x/crypto. A path matches itself and the modules below it.
var forbidden = []string{
	"github.com/prometheus/prometheus",
	"github.com/grafana/grafana-foundation-sdk",
	"github.com/jackc/pgx",
	"github.com/prometheus/exporter-toolkit",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters",
	"golang.org/x/crypto",
}

// consumerMain uses lease and observe the way the README starts: a lease Client and an
// Observer on one registry, the Observer hooked on the client. No Redis is contacted.
const consumerMain = `package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
	"github.com/lockwatch/lockwatch/observe"
)

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	reg := prometheus.NewRegistry()
	locks, err := lease.New(rdb, lease.Options{Registerer: reg})
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	obs, err := observe.New(observe.Options{Registerer: reg, Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		panic(err)
	}
	rdb.AddHook(obs.Hook())
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	fmt.Println("families", len(families))
}
`

// rueidisMain builds a rueidis client hooked by rueidisobserve; the client is not dialled.
const rueidisMain = `package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/observe"
	"github.com/lockwatch/lockwatch/observe/rueidisobserve"
)

func main() {
	obs, err := observe.New(observe.Options{Registerer: prometheus.NewRegistry(), Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		panic(err)
	}
	build := rueidisobserve.ClientBuilder(obs)
	fmt.Println("builder", build != nil, rueidisobserve.NewHook(obs) != (rueidisobserve.Hook{}))
}
`

// TestOutsideUser builds, outside the repository and from the file proxy only, what a user of
// a release builds: a program on lease and observe (whose module graph is bounded and holds
// none of the forbidden modules), one on observe/rueidisobserve (which no replace line helps
// any more), and `go install` of lock-exporter and lockwatch-pack at the release, which the go
// command refuses for a module with replace lines.
func TestOutsideUser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands from a fresh module cache (about a minute)")
	}
	o := newOutside(t)

	t.Run("lease and observe consumer", func(t *testing.T) {
		dir := o.consumer(t, consumerMain)
		if got := strings.TrimSpace(run(t, dir, nil, filepath.Join(dir, "consumer"))); !strings.HasPrefix(got, "families ") {
			t.Errorf("consumer printed %q", got)
		}
		// -e: a module the build needs no file of has only its go.mod in this offline module
		// cache, and go list would fail looking up its .info (its time) where a user's go
		// command asks the network; -f prints what go list -m all prints.
		mods := strings.Split(strings.TrimSpace(o.goCmd(t, dir, nil, "list", "-m", "-e", "-f", "{{.Path}} {{.Version}}", "all")), "\n")
		t.Logf("go list -m all: %d modules (the consumer itself included)\n%s", len(mods), strings.Join(mods, "\n"))
		if len(mods) > maxConsumerModules {
			t.Errorf("go list -m all lists %d modules, at most %d allowed", len(mods), maxConsumerModules)
		}
		for _, m := range mods {
			if path, _, _ := strings.Cut(m, " "); within(path, forbidden) {
				t.Errorf("the consumer's module graph holds %s", m)
			}
		}
	})

	t.Run("rueidisobserve consumer", func(t *testing.T) {
		dir := o.consumer(t, rueidisMain)
		if got := strings.TrimSpace(run(t, dir, nil, filepath.Join(dir, "consumer"))); got != "builder true true" {
			t.Errorf("consumer printed %q", got)
		}
	})

	t.Run("go install the commands", func(t *testing.T) {
		gobin, work := t.TempDir(), t.TempDir()
		// go install pkg@version ignores any go.mod around it and allows no -mod flag.
		env := []string{"GOBIN=" + gobin, "GOFLAGS=-modcacherw -trimpath"}
		for _, cmd := range []string{"lock-exporter", "lockwatch-pack"} {
			o.goCmd(t, work, env, "install", base+"/cmd/"+cmd+"@"+o.version)
		}
		if got := run(t, work, nil, filepath.Join(gobin, "lock-exporter"), "--version"); !strings.Contains(got, o.version) {
			t.Errorf("lock-exporter --version: %q, want the module version %s", got, o.version)
		}
		if got := run(t, work, nil, filepath.Join(gobin, "lockwatch-pack"), "--print-config"); !strings.Contains(got, "runbook_base_url:") {
			t.Errorf("lockwatch-pack --print-config printed no configuration:\n%s", got)
		}
	})
}

// consumer writes a module outside the repository that requires the release and has main as
// its program, resolves its requirements (go mod tidy), builds it to dir/consumer and returns
// dir.
func (o *outside) consumer(t *testing.T, main string) string {
	t.Helper()
	dir := t.TempDir()
	goMod := fmt.Sprintf("module example.com/consumer\n\ngo 1.26\n\nrequire %s %s\n", base, o.version)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	o.goCmd(t, dir, nil, "mod", "tidy")
	o.goCmd(t, dir, nil, "build", "-o", "consumer", ".")
	return dir
}
