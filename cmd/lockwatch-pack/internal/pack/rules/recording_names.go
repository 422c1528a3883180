package rules

import "github.com/prometheus/common/model"

// The names of the recording rules: the alerts and the dashboards read the rules by these.
//
// Recording rules aggregate per job and lock namespace. Names follow Prometheus's
// level:metric:operations convention; the window is the last part of the operation, e.g.
// job_lock_namespace:lock_not_owned:ratio_rate5m. With cluster_labels set the rules also keep
// those labels, and the names stay the same: dashboards, alerts and users' own queries read one
// name whether the pack runs per cluster or across clusters, and the level still says the
// finest grouping a single deployment sees.
const level = "job_lock_namespace"

func recorded(metric, operation string, window model.Duration) string {
	return level + ":" + metric + ":" + operation + window.String()
}

// OperationsRate names the per-second rate of renewals plus releases (all outcomes).
func OperationsRate(w model.Duration) string { return recorded("lock_operations", "rate", w) }

// NotOwnedRatio names the share of renewals and releases whose outcome was not_owned.
func NotOwnedRatio(w model.Duration) string { return recorded("lock_not_owned", "ratio_rate", w) }

// RenewalsRate names the per-second rate of renew attempts (all outcomes).
func RenewalsRate(w model.Duration) string { return recorded("lock_renewals", "rate", w) }

// RenewalFailureRatio names the share of renew attempts whose outcome was failed.
func RenewalFailureRatio(w model.Duration) string {
	return recorded("lock_renewal_failures", "ratio_rate", w)
}

// AbandonedRate names the per-second rate of abandoned leases.
func AbandonedRate(w model.Duration) string { return recorded("lock_abandoned", "rate", w) }

// AcquiresRate names the per-second rate of acquire calls (all outcomes).
func AcquiresRate(w model.Duration) string { return recorded("lock_acquires", "rate", w) }

// AcquireWaitQuantile names an acquire-wait quantile in seconds; q is one of Quantiles().
func AcquireWaitQuantile(q Quantile, w model.Duration) string {
	return recorded("lock_acquire_wait_seconds", q.Name+"_rate", w)
}

// Quantile is one recorded acquire-wait quantile.
type Quantile struct {
	Name  string  // p50, p90, p99
	Value float64 // 0.5, 0.9, 0.99
}

// p99 is the quantile LockWaitP99High reads.
var p99 = Quantile{"p99", 0.99}

// Quantiles returns the acquire-wait quantiles recorded for every window.
func Quantiles() []Quantile { return []Quantile{{"p50", 0.5}, {"p90", 0.9}, p99} }
