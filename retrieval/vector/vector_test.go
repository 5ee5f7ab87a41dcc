package vector

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
)

// anisotropic draws n vectors with a shared offset and unequal per-axis
// spread, closer to real embeddings than isotropic noise and a test of the
// centering and rotation.
func anisotropic(seed uint64, n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(0.3 + r.NormFloat64()/float64(1+j%8))
		}
		out[i] = v
	}
	return out
}

func buildIndex(t testing.TB, vecs [][]float32, o Options) *Index {
	t.Helper()
	ix := New(len(vecs[0]), o)
	for i, v := range vecs {
		if err := ix.Add(uint32(i), v); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// isotropic draws n Gaussian vectors: no structure for the codes to use.
func isotropic(seed uint64, n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 11))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func TestRecall(t *testing.T) {
	// Clustered data, the shape of real embeddings: the defaults must
	// reach recall 0.95 while scanning a fraction of the index.
	t.Run("clustered", func(t *testing.T) {
		const n = 20000
		w := workload.NewClustered(n, workload.ClusterOptions{})
		vecs, queries := w.Docs, w.Queries[:100]
		ix := buildIndex(t, vecs, Options{})
		if len(ix.lists) < 10 || ix.unexplained() > maxUnexplained {
			t.Fatalf("%d vectors in %d lists leaving %.3f of the variance, want at least 10 lists and at most %v",
				n, len(ix.lists), ix.unexplained(), maxUnexplained)
		}
		for _, k := range []int{10, 50} {
			r := recallOf(ix, queries, k)
			t.Logf("recall@%d = %.3f", k, r)
			if r < 0.95 {
				t.Errorf("recall@%d = %.3f, want >= 0.95", k, r)
			}
		}
		if b := ix.budget(50, n); b >= n {
			t.Errorf("a search scans %d of %d vectors, want fewer", b, n)
		}
	})
	// Isotropic data has no clusters for the lists to follow: the lists
	// leave nearly all the variance, a budgeted probe would find a fraction
	// of the neighbours, so Search probes every list and keeps the
	// quantized scan's recall; a budgeted probe, forced, loses it.
	t.Run("isotropic", func(t *testing.T) {
		const n, dim = 6000, 64
		vecs, queries := isotropic(1, n, dim), isotropic(2, 40, dim)
		ix := buildIndex(t, vecs, Options{})
		if u := ix.unexplained(); u <= maxUnexplained {
			t.Fatalf("isotropic data: the lists leave %.3f of the variance, want > %v", u, maxUnexplained)
		}
		def := recallOf(ix, queries, 50)
		t.Logf("isotropic recall@50: %.3f", def)
		if def < 0.95 {
			t.Errorf("isotropic recall@50 = %.3f, want >= 0.95", def)
		}
	})
}

// recallOf is the recall@k of ix.Search against exact search.
func recallOf(ix *Index, queries [][]float32, k int) float64 {
	var got, want [][]Scored
	for _, q := range queries {
		hits := ix.Search(q, k, nil)
		if len(hits) != k {
			panic(fmt.Sprintf("search returned %d hits, want %d", len(hits), k))
		}
		got = append(got, hits)
		want = append(want, ix.SearchExact(q, k, nil))
	}
	return recallAt(got, want)
}

func TestScoresAreExactCosines(t *testing.T) {
	vecs := anisotropic(3, 3000, 32)
	ix := buildIndex(t, vecs, Options{})
	q := vecs[17]
	hits := ix.Search(q, 5, nil)
	if len(hits) == 0 || hits[0].ID != 17 || math.Abs(float64(hits[0].Score)-1) > 1e-5 {
		t.Fatalf("a stored vector as query = %v, want id 17 with cosine 1", hits)
	}
	for _, h := range hits {
		if want := cosine(q, vecs[h.ID]); math.Abs(float64(h.Score)-want) > 1e-5 {
			t.Errorf("id %d score %v, want cosine %v", h.ID, h.Score, want)
		}
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not best first: %v", hits)
		}
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestExactBelowThreshold(t *testing.T) {
	vecs := anisotropic(4, 500, 16)
	ix := buildIndex(t, vecs, Options{})
	if ix.trained {
		t.Fatal("index below the threshold built codes")
	}
	for _, q := range anisotropic(5, 10, 16) {
		if got, want := ix.Search(q, 20, nil), ix.SearchExact(q, 20, nil); !slices.Equal(got, want) {
			t.Fatalf("Search below the threshold differs from exact:\n%v\n%v", got, want)
		}
	}
}

func TestFilter(t *testing.T) {
	const n, dim = 3000, 32
	vecs := anisotropic(6, n, dim)
	ix := buildIndex(t, vecs, Options{})
	even := func(id uint32) bool { return id%2 == 0 }
	rare := func(id uint32) bool { return id%100 == 7 } // 30 ids
	var got, want [][]Scored
	for _, q := range anisotropic(7, 20, dim) {
		hits := ix.Search(q, 50, even)
		if len(hits) != 50 {
			t.Fatalf("even filter returned %d hits, want 50", len(hits))
		}
		for _, h := range hits {
			if !even(h.ID) {
				t.Fatalf("filter rejected id %d but it was returned", h.ID)
			}
		}
		got = append(got, hits)
		want = append(want, ix.SearchExact(q, 50, even))

		// Fewer accepted vectors than k: all of them, exactly ranked.
		hits, exact := ix.Search(q, 50, rare), ix.SearchExact(q, 50, rare)
		if len(exact) != 30 || !slices.Equal(hits, exact) {
			t.Fatalf("selective filter = %d hits %v, want the exact %d", len(hits), hits, len(exact))
		}
		if got, want := ix.Search(q, 1, rare), ix.SearchExact(q, 1, rare); !slices.Equal(got, want) {
			t.Fatalf("selective filter, k=1 = %v, want %v", got, want)
		}
	}
	if r := recallAt(got, want); r < 0.95 {
		t.Errorf("filtered recall@50 = %.3f, want >= 0.95", r)
	}
	if hits := ix.Search(vecs[0], 5, func(uint32) bool { return false }); hits != nil {
		t.Errorf("filter accepting nothing returned %v, want nil", hits)
	}
}

func TestAcceptCalledOnce(t *testing.T) {
	ix := buildIndex(t, anisotropic(8, 3000, 16), Options{})
	seen := map[uint32]int{}
	ix.Search(anisotropic(9, 1, 16)[0], 10, func(id uint32) bool { seen[id]++; return id%3 == 0 })
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("accept called %d times for id %d", c, id)
		}
	}
}

func TestRemove(t *testing.T) {
	for _, o := range []Options{{}, {Exact: true}} {
		t.Run(fmt.Sprintf("exact=%v", o.Exact), func(t *testing.T) {
			vecs := anisotropic(10, 2500, 16)
			ix := buildIndex(t, vecs, o)
			q := vecs[42]
			top := ix.Search(q, 10, nil)
			removed := map[uint32]bool{}
			for _, h := range top[:5] {
				ix.Remove(h.ID)
				removed[h.ID] = true
			}
			ix.Remove(999_999) // unknown: no effect
			if ix.Len() != 2495 {
				t.Fatalf("Len = %d, want 2495", ix.Len())
			}
			after := ix.Search(q, 10, nil)
			for _, h := range after {
				if removed[h.ID] {
					t.Fatalf("removed id %d returned", h.ID)
				}
			}
			if !slices.Equal(after[:5], top[5:]) {
				t.Errorf("after removing the top 5, top 5 = %v, want %v", after[:5], top[5:])
			}
			// The vector moved into a freed slot is still found by itself.
			last := uint32(len(vecs) - 1)
			if h := ix.Search(vecs[last], 1, nil); len(h) != 1 || h[0].ID != last {
				t.Errorf("moved vector search = %v, want id %d", h, last)
			}
			if err := ix.Add(top[0].ID, vecs[top[0].ID]); err != nil {
				t.Fatal(err)
			}
			if h := ix.Search(q, 1, nil); h[0].ID != top[0].ID {
				t.Errorf("re-added vector not found first: %v", h)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	ix := buildIndex(t, anisotropic(11, 2500, 8), Options{})
	nv := []float32{0, 0, 0, 0, 0, 0, 0, 2}
	if err := ix.Add(3, nv); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 2500 {
		t.Errorf("Len after replace = %d, want 2500", ix.Len())
	}
	got, ok := ix.Vector(3)
	if !ok || !slices.Equal(got, []float32{0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Errorf("Vector(3) = %v, want the new vector normalized", got)
	}
	if h := ix.Search(nv, 1, nil); h[0].ID != 3 || math.Abs(float64(h[0].Score)-1) > 1e-6 {
		t.Errorf("search for the new vector = %v, want id 3 at cosine 1", h)
	}
}

func TestAddErrors(t *testing.T) {
	ix := New(4, Options{})
	if err := ix.Add(1, []float32{1, 2, 3}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("3-d vector in a 4-d index: err = %v, want ErrDimension", err)
	}
	if err := ix.Add(1, make([]float32, 4)); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("zero vector: err = %v, want ErrInvalid", err)
	}
	if err := ix.Add(1, []float32{float32(math.NaN()), 0, 0, 0}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("NaN vector: err = %v, want ErrInvalid", err)
	}
	if ix.Len() != 0 {
		t.Errorf("failed adds changed Len to %d", ix.Len())
	}
	if h := ix.Search([]float32{1, 0, 0}, 1, nil); h != nil {
		t.Errorf("search with a wrong dimension = %v, want nil", h)
	}
	if h := ix.Search([]float32{1, 0, 0, 0}, 0, nil); h != nil {
		t.Errorf("search with k=0 = %v, want nil", h)
	}
}

func TestDeterministic(t *testing.T) {
	vecs := anisotropic(12, 3000, 24)
	a, b := buildIndex(t, vecs, Options{Seed: 9}), buildIndex(t, vecs, Options{Seed: 9})
	for _, q := range anisotropic(13, 10, 24) {
		if x, y := a.Search(q, 20, nil), b.Search(q, 20, nil); !slices.Equal(x, y) {
			t.Fatalf("two builds with one seed differ:\n%v\n%v", x, y)
		}
	}
}

func TestConcurrentSearch(t *testing.T) {
	vecs := anisotropic(14, 3000, 32)
	ix := buildIndex(t, vecs, Options{})
	queries := anisotropic(15, 8, 32)
	want := make([][]Scored, len(queries))
	for i, q := range queries {
		want[i] = ix.Search(q, 10, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 4 {
		wg.Go(func() {
			for r := range 20 {
				i := (g + r) % len(queries)
				if got := ix.Search(queries[i], 10, nil); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("query %d: %v, want %v", i, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestFWHTOrthonormal(t *testing.T) {
	a := make([]float32, 64)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	var before float64
	for _, x := range a {
		before += float64(x) * float64(x)
	}
	b := slices.Clone(a)
	fwht64(b)
	var after float64
	for _, x := range b {
		after += float64(x) * float64(x)
	}
	if math.Abs(after-before) > 1e-3 {
		t.Fatalf("norm² %v before, %v after: not orthonormal", before, after)
	}
	fwht64(b) // the orthonormal transform is its own inverse
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4 {
			t.Fatalf("H·H·a differs from a at %d: %v vs %v", i, b[i], a[i])
		}
	}
}

// The 1-bit scan (unrolled six-word loop, AVX-512 kernel, any width)
// gives what its formula gives, computed here plainly.
func TestScanMatchesReference(t *testing.T) {
	const n = 300
	r := rand.New(rand.NewPCG(3, 3))
	for _, w := range []int{6, 5} {
		codes := make([]uint64, n*w)
		for i := range codes {
			codes[i] = r.Uint64()
		}
		factor, pop := make([]float32, n), make([]uint16, n)
		for i := range factor {
			factor[i], pop[i] = r.Float32(), uint16(r.IntN(385))
		}
		qp := queryPlanes{lo: -0.3, delta: 0.04, sum: 0.7}
		for _, p := range []*[]uint64{&qp.p0, &qp.p1, &qp.p2, &qp.p3} {
			for range w {
				*p = append(*p, r.Uint64())
			}
		}
		want := make([]float32, n)
		wlo, whi := float32(math.Inf(1)), float32(math.Inf(-1))
		for s := range n {
			a := 0
			for i := range w {
				c := codes[s*w+i]
				a += bits.OnesCount64(c&qp.p0[i]) + 2*bits.OnesCount64(c&qp.p1[i]) + 4*bits.OnesCount64(c&qp.p2[i]) + 8*bits.OnesCount64(c&qp.p3[i])
			}
			// Each product rounded (no FMA), as the scan computes it.
			want[s] = float32(factor[s]*(float32(2*qp.lo*float32(pop[s]))+float32(2*qp.delta*float32(a))-qp.sum)) + 0.25
			wlo, whi = min(wlo, want[s]), max(whi, want[s])
		}
		// With the planes in one array, the AVX-512 kernel runs where the
		// machine has it (six words); without, the Go loops.
		for _, all := range [][]uint64{slices.Concat(qp.p0, qp.p1, qp.p2, qp.p3), nil} {
			qp.all = all
			got := make([]float32, n)
			lo, hi := qp.scan(codes, factor, pop, 0.25, got)
			if !slices.Equal(got, want) || lo != wlo || hi != whi {
				t.Fatalf("%d words (planes in one array: %v): the scan differs from its formula", w, all != nil)
			}
		}
	}
}

// clustered draws n unit vectors from a mixture of c anisotropic Gaussian
// clusters, as sentence embeddings look: cluster centres that share a
// common direction (cosine about 0.2 between centres), cluster sizes that
// vary (the cluster of a draw is c·u² for u uniform), and within a cluster
// a spread that decays along 32 random axes (axis a has scale
// 0.45/(1+a)^0.8) over an isotropic noise floor. A vector's cosine to its
// centre is about 0.75.
func clustered(seed uint64, n, dim, c int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 13))
	// The centres and the per-cluster axes use a fixed stream, so that
	// documents and queries drawn with different seeds share clusters.
	g := rand.New(rand.NewPCG(uint64(dim)<<20|uint64(c), 17))
	const axes = 32
	common := unit(gauss(g, dim))
	centres := make([][]float32, c)
	basis := make([][][]float32, c)
	for i := range centres {
		v := unit(gauss(g, dim))
		for j := range v {
			v[j] += 0.5 * common[j]
		}
		centres[i] = unit(v)
		basis[i] = make([][]float32, axes)
		for a := range basis[i] {
			basis[i][a] = unit(gauss(g, dim))
		}
	}
	noise := 0.5 / math.Sqrt(float64(dim))
	out := make([][]float32, n)
	for i := range out {
		u := r.Float64()
		k := int(float64(c) * u * u)
		v := slices.Clone(centres[k])
		for a, b := range basis[k] {
			w := float32(0.45 * r.NormFloat64() / math.Pow(1+float64(a), 0.8))
			for j := range v {
				v[j] += w * b[j]
			}
		}
		for j := range v {
			v[j] += float32(noise * r.NormFloat64())
		}
		out[i] = unit(v)
	}
	return out
}

func gauss(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	return v
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(s)
	for j := range v {
		v[j] = float32(float64(v[j]) * inv)
	}
	return v
}

// TestHugeProbe: a Probe so large that its budget overflows an int (at
// 1e30 on 64-bit, 1e9 on 32-bit) scans every list, as any Probe past the
// index's size does, instead of a negative budget that scans none.
func TestHugeProbe(t *testing.T) {
	vecs := isotropic(3, 3000, 32)
	ix := buildIndex(t, vecs, Options{})
	if b := ix.budget(50, len(vecs)); b <= 0 {
		t.Fatalf("default budget %d", b)
	}
	ix.setSearch(Options{Probe: 1e30})
	if b := ix.budget(50, len(vecs)); b < len(vecs) {
		t.Fatalf("Probe 1e30: budget %d, want at least the index's %d vectors", b, len(vecs))
	}
	for id := range 20 {
		if h := ix.Search(vecs[id], 1, nil); len(h) != 1 || h[0].ID != uint32(id) {
			t.Fatalf("Probe 1e30: vector %d's best hit is %v", id, h)
		}
	}
}
