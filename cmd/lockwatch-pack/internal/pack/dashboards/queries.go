package dashboards

import (
	"fmt"
	"strconv"
)

// The PromQL shapes the panels repeat. Every range is $__rate_interval, as
// dashboard-linter's target-rate-interval-rule asks, so a panel stays right at
// any zoom level and scrape interval.

// rateBy is a counter's per-second rate, summed by labels (such as
// "lock_namespace, outcome").
func rateBy(labels, counter, selector string) string {
	return fmt.Sprintf("sum by (%s) (rate(%s%s[$__rate_interval]))", labels, counter, selector)
}

// aggregateBy is a gauge aggregated with op (sum, min, max) by labels.
func aggregateBy(op, labels, gauge, selector string) string {
	return fmt.Sprintf("%s by (%s) (%s%s)", op, labels, gauge, selector)
}

// histogramQuantile estimates quantile q of a library histogram per namespace.
func histogramQuantile(q float64, histogram, selector string, by ...string) string {
	group := "lock_namespace"
	for _, b := range by {
		group = b + ", " + group
	}
	return fmt.Sprintf("histogram_quantile(%s, sum by (%s, le) (rate(%s_bucket%s[$__rate_interval])))",
		strconv.FormatFloat(q, 'f', -1, 64), group, histogram, selector)
}
