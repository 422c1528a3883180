//go:build race

package observe

// raceEnabled: the race detector makes sync.Pool drop items at random, so allocation counts
// of pooled paths are not asserted under it.
const raceEnabled = true
