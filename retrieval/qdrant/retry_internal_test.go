package qdrant

import (
	"testing"
	"time"
)

// TestBackoff: each wait lies in [0, ceiling), the ceiling doubling from
// the base up to the cap, and the draws are spread over the range (full
// jitter), not all at its top.
func TestBackoff(t *testing.T) {
	base, capd := 10*time.Millisecond, 300*time.Millisecond
	for attempt, ceiling := range []time.Duration{10, 20, 40, 80, 160, 300, 300, 300} {
		ceiling *= time.Millisecond
		var lo, hi time.Duration = ceiling, 0
		for range 2000 {
			d := backoff(attempt, base, capd)
			if d < 0 || d >= ceiling {
				t.Fatalf("attempt %d: wait %v outside [0, %v)", attempt, d, ceiling)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo > ceiling/10 || hi < ceiling*9/10 {
			t.Errorf("attempt %d: waits span [%v, %v] of [0, %v): not spread", attempt, lo, hi, ceiling)
		}
	}
	if d := backoff(1000, base, capd); d >= capd {
		t.Errorf("attempt 1000: %v, want under the cap %v", d, capd)
	}
}
