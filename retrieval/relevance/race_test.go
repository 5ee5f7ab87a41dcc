//go:build race

package relevance_test

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
