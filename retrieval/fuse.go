package retrieval

import (
	"cmp"
	"hash/maphash"
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
	// Scores accumulate in small records pointing at each chunk's first hit;
	// hits (a few hundred bytes each) are copied once, in their final order,
	// rather than moved by the sort.
	type fused struct {
		score      float64
		list, rank int32
	}
	hit := func(f fused) *Hit { return &lists[f.list][f.rank] }
	// On the stack too for up to 256 hits (4 KB): fusion runs on every
	// hybrid search, often twice.
	var accBuf [256]fused
	acc := accBuf[:0]
	if n > len(accBuf) {
		acc = make([]fused, 0, n)
	}
	// Each chunk's record in acc is found through an open-addressing table
	// of acc indices (-1: empty) at most half full, on the stack for the
	// usual few hundred hits: a map of IDs was a third of fusion's bytes.
	size := 16
	for size < 2*n {
		size *= 2
	}
	var buf [512]int32 // 2 KB: n up to 256 without a heap table
	var slots []int32
	if size <= len(buf) {
		slots = buf[:size]
	} else {
		slots = make([]int32, size)
	}
	for i := range slots {
		slots[i] = -1
	}
	mask := uint64(size - 1)
	seed := maphash.MakeSeed()
	for li, l := range lists {
		w := 1.0
		if li < len(weights) && weights[li] > 0 {
			w = weights[li]
		}
		for r := range l {
			s := w / float64(k+r+1)
			id := l[r].Chunk.ID
			at := maphash.String(seed, id) & mask
			for slots[at] >= 0 && hit(acc[slots[at]]).Chunk.ID != id {
				at = (at + 1) & mask
			}
			if i := slots[at]; i >= 0 {
				acc[i].score += s
				continue
			}
			slots[at] = int32(len(acc))
			acc = append(acc, fused{score: s, list: int32(li), rank: int32(r)})
		}
	}
	// Chunk IDs are distinct here, so (score, ID) orders totally and no
	// stable sort is needed.
	slices.SortFunc(acc, func(a, b fused) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(hit(a).Chunk.ID, hit(b).Chunk.ID)
	})
	out := make([]Hit, len(acc))
	for i, f := range acc {
		out[i] = *hit(f)
		out[i].Score, out[i].Method = f.score, MethodHybrid
	}
	return out
}
