// Command quickstart is the library example of the README, kept here so it compiles and runs
// with every change (a test checks the README shows this file's code unchanged).
//
// It takes a lease lock on a Redis, runs one job under it with its fencing token, and serves the
// library's metrics on :2112 for Prometheus to scrape, the way a worker would, until Ctrl-C (or
// for --duration):
//
//	go run ./examples/quickstart --redis.addr localhost:6379
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/lease"
)

func main() {
	addr := flag.String("redis.addr", "localhost:6379", "Redis to take the lock on")
	listen := flag.String("metrics.listen", "127.0.0.1:2112", "where to serve /metrics")
	serveFor := flag.Duration("duration", 0, "keep serving /metrics this long after the job (0: until Ctrl-C)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *listen, *serveFor); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr, listen string, serveFor time.Duration) error {
	// ContextTimeoutEnabled lets the lease's renew and acquire timeouts bound each command.
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rdb.Close()

	reg := prometheus.NewRegistry()
	locks, err := lease.New(rdb, lease.Options{Registerer: reg})
	if err != nil {
		return fmt.Errorf("lease client: %w", err)
	}
	jobs, err := locks.Declare("scheduler", lease.Policy{
		TTL:            time.Minute,   // renewed every TTL/3 while the job runs
		OnRenewFailure: lease.Abandon, // renews failing: cancel the job's context before the key can expire
		Fencing:        true,          // hand the job a monotonic token for its writes
	})
	if err != nil {
		return fmt.Errorf("namespace: %w", err)
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("metrics server: %v", err)
		}
	}()
	defer srv.Close()

	err = jobs.Do(ctx, "scheduler:job:42", func(ctx context.Context, fence int64) error {
		// ctx ends with cause lease.ErrAbandoned if the lease cannot be kept: stop writing.
		// Pass fence to the storage, which refuses writes older than its last fence.
		fmt.Printf("job 42 runs under the lock with fence %d\n", fence)
		return runJob(ctx, fence)
	})
	switch {
	case errors.Is(err, lease.ErrBusy):
		fmt.Println("job 42 is running elsewhere; skipping")
	case errors.Is(err, lease.ErrAbandoned):
		return fmt.Errorf("lease lost mid-job, the next owner redoes it: %w", err)
	case err != nil:
		return fmt.Errorf("job 42: %w", err)
	default:
		fmt.Println("job 42 done; lock released")
	}

	// A worker lives on after one job: keep serving, so Prometheus has the lock metrics to scrape.
	fmt.Printf("serving metrics on http://%s/metrics until Ctrl-C\n", ln.Addr())
	if serveFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, serveFor)
		defer cancel()
	}
	<-ctx.Done()
	return nil
}

// runJob stands in for the real work: it honours ctx like real work must.
func runJob(ctx context.Context, fence int64) error {
	select {
	case <-time.After(time.Second):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
