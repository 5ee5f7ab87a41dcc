package vector

import (
	"math"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// TestInt8Tradeoff measures what the package documentation states about
// keeping vectors as int8 (one scale per vector, 384 B instead of 1.5 KiB
// at 384 dimensions) instead of float32: the exact top-50 by int8 dot
// products against the float32 one, on the clustered workload.
func TestInt8Tradeoff(t *testing.T) {
	const n = 20000
	w := workload.NewClustered(n, workload.ClusterOptions{})
	codes := make([][]int8, n)
	scale := make([]float32, n)
	for i, v := range w.Docs {
		var m float64
		for _, x := range v {
			m = math.Max(m, math.Abs(float64(x)))
		}
		scale[i] = float32(m / 127)
		c := make([]int8, len(v))
		for j, x := range v {
			c[j] = int8(math.Round(float64(x) / float64(scale[i])))
		}
		codes[i] = c
	}
	ix := buildIndex(t, w.Docs, Options{Exact: true})
	var got, want [][]Scored
	for _, q := range w.Queries[:50] {
		want = append(want, ix.SearchExact(q, workload.TopK, nil))
		h := topK{k: workload.TopK}
		for i, c := range codes {
			var s float32
			for j, x := range c {
				s += float32(x) * q[j]
			}
			h.push(Scored{ID: uint32(i), Score: s * scale[i]})
		}
		got = append(got, h.sorted())
	}
	r := recallAt(got, want)
	t.Logf("exact top-50 by int8 vectors: recall@50 %.4f against float32", r)
	if r < 0.99 {
		t.Errorf("int8 recall@50 = %.4f, want >= 0.99", r)
	}
}
