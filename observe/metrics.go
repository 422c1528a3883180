package observe

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

var globMatch = glob.Match

// nsMetrics are one namespace's series that the wire can derive.
type nsMetrics struct {
	waitAcquired, waitBusy, waitError   prometheus.Observer
	renewOK, renewFailed, renewNotOwned prometheus.Counter
	relOK, relNotOwned, relError        prometheus.Counter
	heldSeconds                         prometheus.Observer
	held                                prometheus.Gauge
}

func curry(f *lockmetrics.Families, ns string) *nsMetrics {
	return &nsMetrics{
		waitAcquired:  f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeAcquired),
		waitBusy:      f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeBusy),
		waitError:     f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeError),
		renewOK:       f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeOK),
		renewFailed:   f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeFailed),
		renewNotOwned: f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeNotOwned),
		relOK:         f.Releases.WithLabelValues(ns, lockmetrics.OutcomeOK),
		relNotOwned:   f.Releases.WithLabelValues(ns, lockmetrics.OutcomeNotOwned),
		relError:      f.Releases.WithLabelValues(ns, lockmetrics.OutcomeError),
		heldSeconds:   f.HeldSeconds.WithLabelValues(ns),
		held:          f.Held.WithLabelValues(ns),
	}
}
