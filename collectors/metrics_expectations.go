package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/duration"
)

// expectations exports what the configuration declares about each namespace, so that rules can
// compare observed idle time and TTL with the renew cadence owners promised.
type expectations struct {
	ttl, renew, maxHold *prometheus.Desc
}

func newExpectations() *expectations {
	return &expectations{
		ttl: namespaceDesc("lock_expected_ttl_seconds",
			"Lease TTL the namespace's configuration declares; absent when not declared."),
		renew: namespaceDesc("lock_expected_renew_interval_seconds",
			"Renew interval the namespace's configuration declares; absent when not declared."),
		maxHold: namespaceDesc("lock_expected_max_hold_seconds",
			"Longest hold the namespace's configuration declares for one lock (LockHeldTooLong); absent when not declared."),
	}
}

func (e *expectations) describe(ch chan<- *prometheus.Desc) {
	ch <- e.ttl
	ch <- e.renew
	ch <- e.maxHold
}

func (e *expectations) update(res *Result, ch chan<- prometheus.Metric) {
	for _, ns := range res.Namespaces {
		if ttl := ns.Namespace.ExpectedTTL; ttl > 0 {
			ch <- gauge(e.ttl, duration.Seconds(ttl), ns.Namespace.Name)
		}
		if every := ns.Namespace.ExpectedRenewInterval; every > 0 {
			ch <- gauge(e.renew, duration.Seconds(every), ns.Namespace.Name)
		}
		if hold := ns.Namespace.ExpectedMaxHold; hold > 0 {
			ch <- gauge(e.maxHold, duration.Seconds(hold), ns.Namespace.Name)
		}
	}
}
