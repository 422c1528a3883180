// Package duration converts durations for what lockwatch exposes: the exporter's /metrics
// (collectors) and lock-exporter inspect's JSON, so that both print the same number for the
// same duration.
package duration

import "time"

// Seconds converts d to seconds with one correctly rounded division, so that a whole number of
// milliseconds comes out as the double nearest to its decimal (1868ms → 1.868).
// time.Duration.Seconds adds the whole seconds and the fraction as two rounded parts and can land
// one step off (1868ms → 1.8679999999999999), which then shows in /metrics and in inspect's JSON.
// Exact for every |d| below 2^53 ns (104 days); beyond that the float64 of d is rounded first.
func Seconds(d time.Duration) float64 {
	return float64(d) / float64(time.Second)
}
