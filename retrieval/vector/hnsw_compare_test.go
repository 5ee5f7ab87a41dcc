package vector

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// A minimal HNSW (Malkov & Yashunin), for the measured comparison in the
// package documentation only: M = 16 links per node (32 on layer 0),
// efConstruction = 100, closest-M pruning, float32 dot products. It is
// not used by the index.
type hnswGraph struct {
	vecs  [][]float32
	links [][][]uint32 // node -> layer -> neighbours
	entry uint32
	top   int
	r     *rand.Rand
	m, ef int
	evals int // distance evaluations, for the build cost
}

// visitSet marks visited nodes by epoch, so a search clears nothing.
type visitSet struct {
	mark []uint32
	ep   uint32
}

func (v *visitSet) reset(n int) {
	if len(v.mark) < n {
		v.mark = append(v.mark, make([]uint32, n-len(v.mark))...)
	}
	v.ep++
}

// set marks id and reports whether it was marked already.
func (v *visitSet) set(id uint32) bool {
	was := v.mark[id] == v.ep
	v.mark[id] = v.ep
	return was
}

type cand struct {
	id  uint32
	sim float32
}

// minHeap pops the least similar first; maxHeap the most similar first.
type minHeap []cand

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *minHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

type maxHeap struct{ minHeap }

func (h maxHeap) Less(i, j int) bool { return h.minHeap[i].sim > h.minHeap[j].sim }

func (g *hnswGraph) sim(q []float32, id uint32) float32 {
	g.evals++
	return dot(q, g.vecs[id])
}

// searchLayer is the beam search of one layer from the entry points.
func (g *hnswGraph) searchLayer(q []float32, eps []cand, ef, layer int, visited *visitSet) []cand {
	visited.reset(len(g.vecs))
	res := &minHeap{}
	fr := &maxHeap{}
	for _, e := range eps {
		visited.set(e.id)
		heap.Push(res, e)
		heap.Push(fr, e)
	}
	for fr.Len() > 0 {
		c := heap.Pop(fr).(cand)
		if res.Len() >= ef && c.sim < (*res)[0].sim {
			break
		}
		for _, nb := range g.links[c.id][layer] {
			if visited.set(nb) {
				continue
			}
			s := g.sim(q, nb)
			if res.Len() < ef || s > (*res)[0].sim {
				heap.Push(res, cand{nb, s})
				heap.Push(fr, cand{nb, s})
				if res.Len() > ef {
					heap.Pop(res)
				}
			}
		}
	}
	out := slices.Clone(*res)
	slices.SortFunc(out, func(a, b cand) int { return cmpF(b.sim, a.sim) })
	return out
}

func cmpF(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (g *hnswGraph) add(v []float32, visited *visitSet) {
	id := uint32(len(g.vecs))
	g.vecs = append(g.vecs, v)
	level := int(-math.Log(1-g.r.Float64()) / math.Log(float64(g.m)))
	g.links = append(g.links, make([][]uint32, level+1))
	if id == 0 {
		g.top = level
		return
	}
	eps := []cand{{g.entry, g.sim(v, g.entry)}}
	for l := g.top; l > level; l-- {
		eps = g.searchLayer(v, eps, 1, l, visited)[:1]
	}
	for l := min(level, g.top); l >= 0; l-- {
		found := g.searchLayer(v, eps, g.ef, l, visited)
		maxM := g.m
		if l == 0 {
			maxM = 2 * g.m
		}
		nbs := found[:min(len(found), g.m)]
		for _, nb := range nbs {
			g.links[id][l] = append(g.links[id][l], nb.id)
			ln := append(g.links[nb.id][l], id)
			if len(ln) > maxM { // prune to the closest maxM
				cs := make([]cand, len(ln))
				for i, x := range ln {
					cs[i] = cand{x, g.sim(g.vecs[nb.id], x)}
				}
				slices.SortFunc(cs, func(a, b cand) int { return cmpF(b.sim, a.sim) })
				ln = ln[:0]
				for _, c := range cs[:maxM] {
					ln = append(ln, c.id)
				}
			}
			g.links[nb.id][l] = ln
		}
		eps = found
	}
	if level > g.top {
		g.top, g.entry = level, id
	}
}

func (g *hnswGraph) search(q []float32, k, ef int, visited *visitSet) []cand {
	eps := []cand{{g.entry, g.sim(q, g.entry)}}
	for l := g.top; l > 0; l-- {
		eps = g.searchLayer(q, eps, 1, l, visited)[:1]
	}
	res := g.searchLayer(q, eps, max(ef, k), 0, visited)
	return res[:min(k, len(res))]
}

// TestHNSWCompare builds the minimal HNSW and the index on the clustered
// workload of ADAPTRAG_VECTOR_HNSW vectors and logs, for both, build CPU per
// vector, query p50 and recall@50; opt-in (minutes at 100k).
func TestHNSWCompare(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ADAPTRAG_VECTOR_HNSW"))
	if n <= 0 {
		t.Skip("set ADAPTRAG_VECTOR_HNSW to the number of vectors")
	}
	w := workload.NewClustered(n, workload.ClusterOptions{})
	if os.Getenv("ADAPTRAG_VECTOR_KIND") == "isotropic" {
		w.Dense = workload.NewDense(n)
	}
	ix := buildIndex(t, w.Docs, Options{})
	var want [][]Scored
	for _, q := range w.Queries {
		want = append(want, ix.SearchExact(q, workload.TopK, nil))
	}
	g := &hnswGraph{r: rand.New(rand.NewPCG(1, 2)), m: 16, ef: 100}
	visited := &visitSet{}
	c0 := workload.CPUTime()
	for _, v := range w.Docs {
		g.add(v, visited)
	}
	build := workload.CPUTime() - c0
	links := 0
	for _, ls := range g.links {
		for _, l := range ls {
			links += len(l)
		}
	}
	t.Logf("hnsw n=%d: build %.0f µs CPU/vector, %.0f distance evaluations/vector, %.1f links/vector (%.0f B of links/vector)",
		n, float64(build.Microseconds())/float64(n), float64(g.evals)/float64(n), float64(links)/float64(n), 4*float64(links)/float64(n))
	for _, ef := range []int{50, 100, 200, 400} {
		var got [][]Scored
		lat := make([]time.Duration, 0, len(w.Queries))
		g.evals = 0
		c0 := workload.CPUTime()
		for _, q := range w.Queries {
			t0 := time.Now()
			res := g.search(q, workload.TopK, ef, visited)
			lat = append(lat, time.Since(t0))
			hits := make([]Scored, len(res))
			for i, c := range res {
				hits[i] = Scored{ID: c.id, Score: c.sim}
			}
			got = append(got, hits)
		}
		cpu := (workload.CPUTime() - c0) / time.Duration(len(w.Queries))
		slices.Sort(lat)
		t.Logf("hnsw n=%d ef=%d: p50 %v cpu/q %v, %d evaluations/query, recall@50 %.3f",
			n, ef, lat[len(lat)/2], cpu, g.evals/len(w.Queries), recallAt(got, want))
	}
	var got [][]Scored
	lat := make([]time.Duration, 0, len(w.Queries))
	c0 = workload.CPUTime()
	for _, q := range w.Queries {
		t0 := time.Now()
		got = append(got, ix.Search(q, workload.TopK, nil))
		lat = append(lat, time.Since(t0))
	}
	cpu := (workload.CPUTime() - c0) / time.Duration(len(w.Queries))
	slices.Sort(lat)
	t.Logf("ivf n=%d: p50 %v cpu/q %v recall@50 %.3f", n, lat[len(lat)/2], cpu, recallAt(got, want))
}
