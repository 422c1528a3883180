package collectors

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestSecondsIsExact checks that every whole number of milliseconds up to 200 s, and a few
// microsecond and nanosecond values, convert to the double that prints as their decimal
// (time.Duration.Seconds gives 1.1179999999999999 for 1118ms).
func TestSecondsIsExact(t *testing.T) {
	for ms := range 200_000 {
		d := time.Duration(ms) * time.Millisecond
		want := strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
		if got := strconv.FormatFloat(Seconds(d), 'f', -1, 64); got != want {
			t.Fatalf("Seconds(%s) prints %s, want %s", d, got, want)
		}
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{1868 * time.Millisecond, "1.868"},
		{1118 * time.Millisecond, "1.118"},
		{1500123 * time.Microsecond, "1.500123"},
		{7*time.Second + 1, "7.000000001"},
		{-time.Nanosecond, "-0.000000001"},
		{0, "0"},
	} {
		if got := strconv.FormatFloat(Seconds(tt.d), 'f', -1, 64); got != tt.want {
			t.Errorf("Seconds(%s) prints %s, want %s", tt.d, got, tt.want)
		}
	}
}

// TestExportedSecondsHaveNoFloatNoise checks the exported value itself: a declared TTL of 1118ms is
// 1.118 in /metrics, not 1.1179999999999999.
func TestExportedSecondsHaveNoFloatNoise(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{
		{Name: "jobs", Pattern: "jobs:*", ExpectedTTL: 1118 * time.Millisecond, ExpectedRenewInterval: 1122 * time.Millisecond / 3},
	}})
	got := gather(t, s.Collector(context.Background()))
	for _, tt := range []struct {
		metric string
		want   float64
	}{
		{"lock_expected_ttl_seconds", 1.118},
		{"lock_expected_renew_interval_seconds", 0.374},
	} {
		if v := only(t, got, tt.metric, "jobs"); v != tt.want {
			t.Errorf("%s = %s, want %s", tt.metric, fmt.Sprint(v), fmt.Sprint(tt.want))
		}
	}
}
