//go:build race

package analysis

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
