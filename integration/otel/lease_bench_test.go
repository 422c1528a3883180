package otel_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/lease"
)

// metricsPaths are the three ways a Client can be built, in the order a round starts with.
var metricsPaths = []string{"off", "prometheus", "otel"}

// benchNamespace is a namespace with the default policy on a Client with the given metrics path.
func benchNamespace(b *testing.B, rdb *redis.Client, path string) *lease.Namespace {
	b.Helper()
	opts := lease.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	switch path {
	case "prometheus":
		opts.Registerer = prometheus.NewRegistry()
	case "otel":
		// A manual reader: what the measurement path costs, without an export running beside it
		// (exports are periodic, off the lock's path, and the application's to configure).
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		opts.MeterProvider = mp
	}
	c, err := lease.New(rdb, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	n, err := c.Declare("bench", lease.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// processCPU is the process's user+system CPU time (all threads: go-redis, GC, the renewers).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cycles runs count Acquire + Release cycles on n and returns the CPU time per cycle.
func cycles(b *testing.B, n *lease.Namespace, key string, count int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := processCPU(b)
	for range count {
		l, err := n.Acquire(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return (processCPU(b) - start) / time.Duration(count)
}

// BenchmarkLeaseMetricsOverhead sets what each metrics path adds to a lock cycle against the client
// CPU time of a real cycle, in the same run. Every b.N iteration is one round: network-free
// cycles on a Client without metrics, with client_golang and with OTel, then real cycles on
// each, in an order rotated from round to round. Figures are medians over rounds; the
// overheads are medians of per-round ratios (network-free difference over the round's real
// cycle CPU). Run with a fixed round count: -benchtime 15x.
func BenchmarkLeaseMetricsOverhead(b *testing.B) {
	const netFreeCycles, realCycles = 20000, 1000
	local := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	local.AddHook(redishook.AnswerLocally{})
	defer local.Close()
	remote := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	defer remote.Close()
	netFree, real := map[string]*lease.Namespace{}, map[string]*lease.Namespace{}
	for _, p := range metricsPaths {
		netFree[p], real[p] = benchNamespace(b, local, p), benchNamespace(b, remote, p)
		cycles(b, real[p], "bench:warm:"+p, 50)
	}
	perPath := map[string][]float64{} // keys "netfree/<path>", "real/<path>"
	var promOverhead, otelOverhead []float64
	b.ResetTimer()
	for round := range b.N {
		cpu := map[string]time.Duration{}
		for i := range metricsPaths {
			p := metricsPaths[(round+i)%len(metricsPaths)]
			cpu["netfree/"+p] = cycles(b, netFree[p], "bench:nf:"+p, netFreeCycles)
		}
		for i := range metricsPaths {
			p := metricsPaths[(round+i)%len(metricsPaths)]
			cpu["real/"+p] = cycles(b, real[p], "bench:real:"+p+":"+strconv.Itoa(round), realCycles)
		}
		for k, v := range cpu {
			perPath[k] = append(perPath[k], float64(v))
		}
		realCycle := float64(cpu["real/off"])
		promOverhead = append(promOverhead, 100*float64(cpu["netfree/prometheus"]-cpu["netfree/off"])/realCycle)
		otelOverhead = append(otelOverhead, 100*float64(cpu["netfree/otel"]-cpu["netfree/off"])/realCycle)
	}
	b.StopTimer()
	for _, p := range metricsPaths {
		b.ReportMetric(median(perPath["netfree/"+p]), "netfree-"+p+"-cpu-ns/cycle")
		b.ReportMetric(median(perPath["real/"+p]), "real-"+p+"-cpu-ns/cycle")
	}
	b.ReportMetric(median(promOverhead), "prometheus-%-of-cycle")
	b.ReportMetric(median(otelOverhead), "otel-%-of-cycle")
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
