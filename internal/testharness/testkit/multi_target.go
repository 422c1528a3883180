package testkit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// MultiTargetConfig writes an exporter config file with one namespace (jobs:*), the YAML in
// extra, and the given targets as {name, address, password}, each password in a file of its
// own (targets take passwords from files only). It returns the config file's path.
func MultiTargetConfig(tb testing.TB, extra string, targets ...[3]string) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("namespaces:\n  - {name: jobs, pattern: \"jobs:*\"}\n" + extra + "targets:\n")
	for _, tg := range targets {
		pw := WriteFile(tb, tg[0]+".pw", tg[2]+"\n")
		fmt.Fprintf(&b, "  - name: %s\n    addr: %s\n    password_file: %s\n", tg[0], tg[1], pw)
	}
	return WriteFile(tb, "exporter.yml", b.String())
}

// StartPasswordRedis starts a redis-server requiring password and returns it with a client.
func StartPasswordRedis(tb testing.TB, password string) (*redistest.Server, *redis.Client) {
	tb.Helper()
	srv := redistest.Start(tb, redistest.WithArgs("--requirepass", password))
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: password, MaxRetries: -1})
	tb.Cleanup(func() { c.Close() })
	return srv, c
}
