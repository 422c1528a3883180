package pgtest_test

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/integration/internal/pgtest"
)

func TestServerLifecycle(t *testing.T) {
	s := pgtest.Start(t)
	db := s.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var version string
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&version); err != nil {
		t.Fatalf("query the fresh server: %v", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Fatalf("create a table: %v", err)
	}
	var listen string
	if err := db.QueryRowContext(ctx, "SHOW listen_addresses").Scan(&listen); err != nil || listen != "127.0.0.1" {
		t.Fatalf("listen_addresses = %q (%v), want loopback only", listen, err)
	}
	t.Logf("PostgreSQL %s on %s", version, s.Addr)

	_ = db.Close()
	s.Stop()
	if s.Running() {
		t.Fatal("Running after Stop")
	}
	if conn, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after Stop", s.Addr)
	}
	s.Stop() // a second Stop is harmless
}

func TestBinDir(t *testing.T) {
	dir := pgtest.BinDir(t)
	for _, name := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(dir + "/" + name); err != nil {
			t.Errorf("BinDir %s lacks %s: %v", dir, name, err)
		}
	}
}
