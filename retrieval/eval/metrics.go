package eval

import (
	"cmp"
	"math"
	"slices"
)

// The metric functions take a ranked list of document ids, best first, and
// the graded judgements of the query (doc id -> grade, relevant when > 0).
// A document listed twice counts only at its first rank, so a retriever
// cannot gain by repeating a hit. A query without relevant documents scores
// 0 on every metric.

// NDCG returns nDCG@k with linear gains: DCG = Σ_{i=1..k} grade_i / log2(i+1),
// divided by the DCG of the ideal ranking of the judged documents.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if len(grades) == 0 || k <= 0 {
		return 0
	}
	slices.SortFunc(grades, func(a, b int) int { return cmp.Compare(b, a) })
	ideal := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	dcg := 0.0
	for i, id := range firstK(ranked, k) {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	return dcg / ideal
}

// Recall returns |relevant documents in the top k| / |relevant documents|.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	total := 0
	for _, g := range rel {
		if g > 0 {
			total++
		}
	}
	if total == 0 {
		return 0
	}
	found := 0
	for _, id := range firstK(ranked, k) {
		if rel[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(total)
}

// MRR returns the reciprocal rank of the first relevant document within the
// top k, or 0 when there is none.
func MRR(ranked []string, rel map[string]int, k int) float64 {
	for i, id := range firstK(ranked, k) {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// firstK returns the first k distinct ids of ranked.
func firstK(ranked []string, k int) []string {
	if k <= 0 {
		return nil
	}
	out := make([]string, 0, min(k, len(ranked)))
	for _, id := range ranked {
		if len(out) == k {
			break
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
