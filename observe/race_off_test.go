//go:build !race

package observe

const raceEnabled = false
