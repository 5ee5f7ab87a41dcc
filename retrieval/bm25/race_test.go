//go:build race

package bm25

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
