//go:build !race

package relevance_test

const raceEnabled = false
