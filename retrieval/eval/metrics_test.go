package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestNDCG(t *testing.T) {
	rel := map[string]int{"a": 3, "b": 1, "z": 0}
	tests := []struct {
		name   string
		ranked []string
		k      int
		want   float64
	}{
		// Ideal: a (3) at rank 1, b (1) at rank 2: IDCG = 3/log2(2) + 1/log2(3).
		{"ideal order", []string{"a", "b", "x"}, 10, 1},
		// DCG = 1/log2(2) + 3/log2(3) = 1 + 1.892789...
		{"swapped", []string{"b", "a"}, 10, (1 + 3/math.Log2(3)) / (3 + 1/math.Log2(3))},
		// Only b at rank 3: DCG = 1/log2(4) = 0.5.
		{"late", []string{"x", "z", "b"}, 10, 0.5 / (3 + 1/math.Log2(3))},
		// Cut at k=1: DCG = 0 (x), IDCG@1 = 3.
		{"cut", []string{"x", "a"}, 1, 0},
		// A duplicate of a at rank 2 counts once: b moves up to rank 2, so the
		// ranking is ideal.
		{"duplicate", []string{"a", "a", "b"}, 10, 1},
		{"empty", nil, 10, 0},
	}
	for _, tc := range tests {
		if got := NDCG(tc.ranked, rel, tc.k); !near(got, tc.want) {
			t.Errorf("%s: NDCG = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := NDCG([]string{"a"}, map[string]int{"a": 0}, 10); got != 0 {
		t.Errorf("no relevant documents: %v, want 0", got)
	}
}

func TestRecallAndMRR(t *testing.T) {
	rel := map[string]int{"a": 1, "b": 2, "c": 1, "n": 0}
	ranked := []string{"x", "b", "n", "a", "y"}
	tests := []struct {
		k          int
		recall, rr float64
	}{
		{1, 0, 0},         // x: nothing relevant
		{3, 1.0 / 3, 0.5}, // b of {a,b,c}; first relevant at rank 2
		{8, 2.0 / 3, 0.5}, // b and a
		{0, 0, 0},
	}
	for _, tc := range tests {
		if got := Recall(ranked, rel, tc.k); !near(got, tc.recall) {
			t.Errorf("Recall@%d = %v, want %v", tc.k, got, tc.recall)
		}
		if got := MRR(ranked, rel, tc.k); !near(got, tc.rr) {
			t.Errorf("MRR@%d = %v, want %v", tc.k, got, tc.rr)
		}
	}
	// A repeated relevant id is counted once: recall stays 1/3.
	if got := Recall([]string{"a", "a", "a"}, rel, 3); !near(got, 1.0/3) {
		t.Errorf("duplicates: Recall = %v, want 1/3", got)
	}
}
