package vector

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// TestScale measures the index at the size ADAPTRAG_VECTOR_N gives (384
// dimensions, clustered and isotropic, or ADAPTRAG_VECTOR_KIND: one of
// those, clustered-fine or corpus:DIR, a public retrieval set's chunks
// embedded offline): build CPU per vector, query p50
// (wall) and mean CPU, recall@50 against exact search, live heap per
// vector, and the same with a 1% and a 10% filter. It is opt-in: minutes
// at 1M.
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ADAPTRAG_VECTOR_N"))
	if n <= 0 {
		t.Skip("set ADAPTRAG_VECTOR_N to measure at that size")
	}
	kinds := []string{"clustered", "isotropic"}
	if k := os.Getenv("ADAPTRAG_VECTOR_KIND"); k != "" {
		kinds = []string{k}
	}
	const dim, nq0 = 384, 200
	for _, kind := range kinds {
		var vecs, qs [][]float32
		if kind == "clustered" {
			w := workload.NewClustered(n, workload.ClusterOptions{})
			vecs, qs = w.Docs, w.Queries
		} else if dir, ok := strings.CutPrefix(kind, "corpus:"); ok {
			vecs, qs = corpusVectors(t, dir, n)
		} else if kind == "clustered-fine" {
			all := clustered(1, n+nq0, dim, max(n/100, 10))
			vecs, qs = all[:n], all[n:]
		} else {
			all := isotropic(1, n+nq0, dim)
			vecs, qs = all[:n], all[n:]
		}
		var ix *Index
		var cpu time.Duration
		mb := workload.HeapMB(func() {
			c0 := workload.CPUTime()
			ix = buildIndex(t, vecs, Options{ListSize: listSize()})
			cpu = workload.CPUTime() - c0
		})
		t.Logf("%s n=%d: build %.1f µs CPU/vector, %d lists, heap %.0f MiB (%.0f B/vector), process RSS %s (workload included)",
			kind, n, float64(cpu.Microseconds())/float64(n), len(ix.lists), mb, mb*(1<<20)/float64(n), fmt.Sprintf("%.0f MiB", workload.RSSMiB()))
		back := reopen(t, ix, kind, n)
		nq := len(qs)
		// floatWant is the float32 truth, unfiltered: what an on-disk index,
		// which scores by int8 copies, is also measured against.
		var floatWant [][]Scored
		if os.Getenv("ADAPTRAG_VECTOR_ONDISK") != "" {
			for _, q := range qs {
				floatWant = append(floatWant, ix.SearchExact(q, workload.TopK, nil))
			}
			ix = back // as a store opens it: past the resident limit, int8 in memory
		}
		for _, sel := range filters() {
			var accept func(uint32) bool
			if sel > 0 {
				accept = func(id uint32) bool { return id%uint32(sel) == 3 }
			}
			want := make([][]Scored, nq)
			for i, q := range qs {
				want[i] = ix.SearchExact(q, workload.TopK, accept)
			}
			for _, so := range searchGrid() {
				ix.setSearch(so)
				got := make([][]Scored, nq)
				lat := make([]time.Duration, nq)
				c0 := workload.CPUTime()
				for i, q := range qs {
					t0 := time.Now()
					got[i] = ix.Search(q, workload.TopK, accept)
					lat[i] = time.Since(t0)
				}
				c := (workload.CPUTime() - c0) / time.Duration(nq)
				slices.Sort(lat)
				t.Logf("%s n=%d filter=%s probe=%v over=%v rerank=%v: p50 %v p99 %v cpu/q %v recall@50 %.3f",
					kind, n, filterName(sel), ix.probe, ix.oversamp, ix.rerankF, lat[nq/2], lat[nq*99/100], c, recallAt(got, want))
				if floatWant != nil && sel == 0 {
					t.Logf("  against float32: search %.3f, exact scan by int8 %.3f", recallAt(got, floatWant), recallAt(want, floatWant))
				}
			}
			ix.setSearch(Options{})
		}
		runtime.KeepAlive(ix)
		runtime.KeepAlive(vecs) // or the heap figure nets out the workload freed during the build
	}
}

// corpusVectors returns n chunks of the retrieval set in dir and its
// queries, embedded by the offline hashing embedder.
func corpusVectors(t *testing.T, dir string, n int) (docs, queries [][]float32) {
	c, err := workload.LoadCorpus(dir, n)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h := embed.NewHashing(embed.HashingConfig{})
	if docs, err = embed.EmbedAll(ctx, h, c.Docs, 1024, nil); err == nil {
		queries, err = h.Embed(ctx, c.Queries)
	}
	if err != nil {
		t.Fatal(err)
	}
	return docs, queries
}

func filterName(sel int) string {
	if sel == 0 {
		return "none"
	}
	return fmt.Sprintf("%g%%", 100/float64(sel))
}

// searchGrid is the search settings TestScale tries: the defaults, or
// those of ADAPTRAG_VECTOR_GRID, "probe/oversample/rerank" triples
// separated by spaces.
func searchGrid() []Options {
	g := os.Getenv("ADAPTRAG_VECTOR_GRID")
	if g == "" {
		return []Options{{}}
	}
	var out []Options
	for _, f := range strings.Fields(g) {
		var o Options
		if _, err := fmt.Sscanf(f, "%g/%g/%g", &o.Probe, &o.Oversample, &o.Rerank); err == nil {
			out = append(out, o)
		}
	}
	return out
}

// filters is the filter selectivities TestScale tries, as 1 in N (0 for
// none): ADAPTRAG_VECTOR_FILTERS, or none, 10% and 1%.
func filters() []int {
	f := strings.Fields(os.Getenv("ADAPTRAG_VECTOR_FILTERS"))
	if len(f) == 0 {
		return []int{0, 10, 100}
	}
	var out []int
	for _, x := range f {
		if v, err := strconv.Atoi(x); err == nil {
			out = append(out, v)
		}
	}
	return out
}

func listSize() int {
	n, _ := strconv.Atoi(os.Getenv("ADAPTRAG_VECTOR_LIST"))
	return n
}

// reopen writes ix to a temporary file, reads it back and logs the file
// size and both times.
// It returns the index ReadIndexAt makes of the file.
func reopen(t *testing.T, ix *Index, kind string, n int) *Index {
	path := t.TempDir() + "/index"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	size, err := ix.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	write := time.Since(t0)
	f, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c0, t0 := workload.CPUTime(), time.Now()
	back, err := ReadIndex(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s n=%d: file %d B (%d B/vector), write+sync %v, read %v (CPU %v)",
		kind, n, size, size/int64(n), write, time.Since(t0), workload.CPUTime()-c0)
	if back.Len() != ix.Len() {
		t.Fatalf("reopened %d vectors, want %d", back.Len(), ix.Len())
	}
	at, err := ReadIndexAt(f, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return at
}
