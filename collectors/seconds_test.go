package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

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
