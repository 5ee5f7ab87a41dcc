package retrieval_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// referenceFuse is weighted RRF as first written: hits moved by a stable
// sort. FuseWeightedRRF must give exactly its result.
func referenceFuse(k int, weights []float64, lists ...[]retrieval.Hit) []retrieval.Hit {
	if k <= 0 {
		k = retrieval.DefaultRRFK
	}
	pos := map[string]int{}
	var out []retrieval.Hit
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
			h.Score, h.Method = s, retrieval.MethodHybrid
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b retrieval.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
	return out
}

// TestFuseMatchesReference fuses generated lists that share chunks (and
// produce tied scores) and checks the result hit for hit, score bit for bit.
func TestFuseMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 500 {
		lists := make([][]retrieval.Hit, 1+r.IntN(4))
		for li := range lists {
			seen := map[int]bool{}
			for range r.IntN(60) {
				id := r.IntN(80)
				if seen[id] {
					continue // a ranked list holds a chunk once
				}
				seen[id] = true
				lists[li] = append(lists[li], retrieval.Hit{
					Chunk:  retrieval.Chunk{ID: fmt.Sprintf("c%02d", id), Text: fmt.Sprint("text ", id), Meta: map[string]string{"n": fmt.Sprint(id)}},
					Score:  r.Float64(),
					Method: retrieval.MethodDense,
				})
			}
		}
		var weights []float64
		if r.IntN(2) == 0 {
			weights = []float64{0.1, 1, 0, -1}[:r.IntN(5)]
		}
		k := r.IntN(3) * 30
		got := retrieval.FuseWeightedRRF(k, weights, lists...)
		want := referenceFuse(k, weights, lists...)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d hits, want %d", trial, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("trial %d, hit %d: %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}

func TestFuseRRF(t *testing.T) {
	a := []retrieval.Hit{{Chunk: retrieval.Chunk{ID: "x"}}, {Chunk: retrieval.Chunk{ID: "y"}}}
	b := []retrieval.Hit{{Chunk: retrieval.Chunk{ID: "y"}}, {Chunk: retrieval.Chunk{ID: "z"}}}
	got := retrieval.FuseRRF(60, a, b)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.Chunk.ID)
		if h.Method != retrieval.MethodHybrid {
			t.Errorf("%s: method %q", h.Chunk.ID, h.Method)
		}
	}
	if !slices.Equal(ids, []string{"y", "x", "z"}) {
		t.Errorf("order %v, want [y x z] (y is in both lists; x and z tie, broken by ID)", ids)
	}
	r2, r1 := 62.0, 61.0 // y's ranks plus k; variables, so that the sum is rounded as at run time
	if want := 1/r2 + 1/r1; got[0].Score != want {
		t.Errorf("y scored %v, want %v", got[0].Score, want)
	}
	if len(retrieval.FuseRRF(0)) != 0 {
		t.Error("no lists should fuse to nothing")
	}
}

// BenchmarkFuseHybrid fuses a dense and a sparse top 50 that share half
// their chunks, as a hybrid search does.
func BenchmarkFuseHybrid(b *testing.B) {
	var dense, sparse []retrieval.Hit
	for i := range 50 {
		dense = append(dense, retrieval.Hit{Chunk: retrieval.Chunk{ID: fmt.Sprint("c", i), Text: "some text"}})
		sparse = append(sparse, retrieval.Hit{Chunk: retrieval.Chunk{ID: fmt.Sprint("c", 25+i), Text: "some text"}})
	}
	b.ReportAllocs()
	for b.Loop() {
		retrieval.FuseWeightedRRF(60, []float64{0.1, 1}, dense, sparse)
	}
}

// Long lists (more hits than the fusion's table on the stack holds) fuse
// as the reference does too.
func TestFuseLongListsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	lists := make([][]retrieval.Hit, 3)
	for li := range lists {
		for _, id := range r.Perm(1000)[:400] {
			lists[li] = append(lists[li], retrieval.Hit{Chunk: retrieval.Chunk{ID: fmt.Sprintf("c%03d", id)}, Score: r.Float64()})
		}
	}
	got, want := retrieval.FuseWeightedRRF(60, []float64{0.5, 1, 2}, lists...), referenceFuse(60, []float64{0.5, 1, 2}, lists...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%d hits fused differ from the reference's %d", len(got), len(want))
	}
}
