package retrieval

import (
	"cmp"
	"slices"
)

// FuseRRF merges ranked lists by reciprocal-rank fusion, the textbook form of
// Cormack et al. (2009): a chunk's fused score is the sum over the lists it
// appears in of 1/(k + rank), rank counted from 1. k <= 0 means DefaultRRFK.
// (Qdrant writes the same formula as 1/(k' + rank0) with rank counted from 0,
// so its k' is k+1.) The result is ordered by fused score, ties broken by
// chunk ID so that fusion is deterministic; its hits have Method "hybrid".
func FuseRRF(k int, lists ...[]Hit) []Hit { return FuseWeightedRRF(k, nil, lists...) }

// FuseWeightedRRF is FuseRRF with a weight per list: a chunk scores the sum
// of weights[i]/(k + rank) over the lists i it appears in (Qdrant's weighted
// RRF). A missing or non-positive weight means 1. Weighting lets a strong
// ranker keep its lead when fused with a weak one.
func FuseWeightedRRF(k int, weights []float64, lists ...[]Hit) []Hit {
	if k <= 0 {
		k = DefaultRRFK
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	pos := make(map[string]int, n)
	out := make([]Hit, 0, n)
	for li, l := range lists {
		w := 1.0
		if li < len(weights) && weights[li] > 0 {
			w = weights[li]
		}
		for r, h := range l {
			s := w / float64(k+r+1)
			if i, ok := pos[h.Chunk.ID]; ok {
				out[i].Score += s
				continue
			}
			pos[h.Chunk.ID] = len(out)
			h.Score, h.Method = s, MethodHybrid
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
	return out
}
