package clients_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestMissingClientFailsLoudly proves that a client that is not installed, or not at its pinned
// version, stops the driver with ErrClientMissing and one line naming the package and its install
// command: never a skip, never a stack trace.
func TestMissingClientFailsLoudly(t *testing.T) {
	srv := redistest.Start(t)
	env, err := clients.DefaultEnv()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		kind clients.Kind
		env  func(t *testing.T) clients.Env
		want []string
	}{{
		name: "python without Debian's packages",
		kind: clients.RedisPy,
		env:  func(t *testing.T) clients.Env { return withPython(t, env, pythonWithoutSite(t, env.Python)) },
		want: []string{"python3-redis", "apt-get install -y python3-redis"},
	}, {
		name: "no python",
		kind: clients.RedisPy,
		env:  func(t *testing.T) clients.Env { return withPython(t, env, filepath.Join(t.TempDir(), "python3")) },
		want: []string{"apt-get install -y python3 python3-redis"},
	}, {
		name: "no node_modules",
		kind: clients.Redlock,
		env:  func(t *testing.T) clients.Env { return withNodeDir(t, env, "", "") },
		want: []string{"ioredis is not installed", "npm ci"},
	}, {
		name: "node_modules of another pin",
		kind: clients.Redlock,
		env: func(t *testing.T) clients.Env {
			return withNodeDir(t, env, `"redlock": "5.0.0-beta.2"`, `"redlock": "4.2.0"`)
		},
		want: []string{"redlock 5.0.0-beta.2 is installed where package.json pins 4.2.0", "npm ci"},
	}, {
		name: "no node",
		kind: clients.RedisSemaphore,
		env: func(t *testing.T) clients.Env {
			e := env
			e.Node = filepath.Join(t.TempDir(), "node")
			return e
		},
		want: []string{"node not found", "apt-get install -y nodejs npm"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.env(t).Launch(t.Context(), tt.kind, srv.Addr)
			if err == nil {
				_ = d.Close()
				t.Fatalf("Launch %s succeeded, want ErrClientMissing", tt.kind)
			}
			if !errors.Is(err, clients.ErrClientMissing) {
				t.Errorf("Launch: %v, want ErrClientMissing", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("the error is more than one line:\n%s", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error %q does not say %q", msg, w)
				}
			}
		})
	}
}

func withPython(t *testing.T, env clients.Env, python string) clients.Env {
	t.Helper()
	env.Python = python
	return env
}

// pythonWithoutSite is Debian's interpreter without its site packages (-S), where
// python3-redis lives: a machine without the package, as the driver sees it.
func pythonWithoutSite(t *testing.T, python string) string {
	t.Helper()
	wrapper := filepath.Join(t.TempDir(), "python3")
	script := "#!/bin/sh\nexec " + python + " -S \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// withNodeDir copies the node driver and its package.json (with pin replaced by repin) into a
// directory of its own; the checkout's node_modules is linked there when pin is set, and left
// out when it is not.
func withNodeDir(t *testing.T, env clients.Env, pin, repin string) clients.Env {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(env.Dir, "node")
	if err := os.Mkdir(filepath.Join(dir, "node"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"driver.cjs", "package.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if pin != "" {
			b = []byte(strings.Replace(string(b), pin, repin, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, "node", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if pin != "" {
		if err := os.Symlink(filepath.Join(src, "node_modules"), filepath.Join(dir, "node", "node_modules")); err != nil {
			t.Fatal(err)
		}
	}
	env.Dir = dir
	return env
}

// TestUnreachableRedisIsOneLine: a driver started against an address nothing listens on fails
// with ErrDriver and one line naming the address, not a stack trace.
func TestUnreachableRedisIsOneLine(t *testing.T) {
	addr := testkit.UnusedAddr(t)
	for _, kind := range clients.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			env, err := clients.DefaultEnv()
			if err != nil {
				t.Fatal(err)
			}
			d, err := env.Launch(t.Context(), kind, addr)
			if err == nil {
				_ = d.Close()
				t.Fatalf("Launch %s against %s succeeded", kind, addr)
			}
			if !errors.Is(err, clients.ErrDriver) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), addr) {
				t.Errorf("Launch: %q, want one ErrDriver line naming %s", err, addr)
			}
		})
	}
}
