package vector

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// The benchmarks run the shared retrieval benchmark's dense workload
// (internal/workload), named and measured like its peers, and beside it the
// clustered workload (sub-benchmarks clustered/N=…), whose shape is that of
// real embeddings.

// work keeps the workloads of every size live for the whole run.
var work workload.Cache

// benchData caches each size's built index and exact truth for the whole
// benchmark run, as the peers' harness does. Benchmarks run one at a time,
// so it needs no lock.
type benchData struct {
	w     workload.Dense
	ix    *Index
	truth [][]Scored
}

type benchKey struct {
	clustered bool
	n         int
}

var benchCache = map[benchKey]*benchData{}

func benchWorkload(n int) *benchData { return benchOf(false, n) }

func benchOf(clustered bool, n int) *benchData {
	key := benchKey{clustered, n}
	d, ok := benchCache[key]
	if !ok {
		if clustered {
			d = &benchData{w: work.Clustered(n).Dense}
		} else {
			d = &benchData{w: work.Dense(n)}
		}
		benchCache[key] = d
	}
	return d
}

// benchCases are the sub-benchmarks of BenchmarkDense and
// BenchmarkDenseIngest: the shared isotropic workload under its published
// names, then the clustered one.
func benchCases() (names []string, data []func() *benchData) {
	for _, clustered := range []bool{false, true} {
		for _, n := range workload.Sizes() {
			name := fmt.Sprintf("N=%d", n)
			if clustered {
				name = "clustered/" + name
			}
			names = append(names, name)
			data = append(data, func() *benchData { return benchOf(clustered, n) })
		}
	}
	return names, data
}

// build adds vecs in batches of 1000 (AddBatch), as the store feeds it.
func build(vecs [][]float32, o Options) *Index {
	ix := New(len(vecs[0]), o)
	ids := make([]uint32, len(vecs))
	for i := range ids {
		ids[i] = uint32(i)
	}
	for i := 0; i < len(vecs); i += 1000 {
		j := min(i+1000, len(vecs))
		if err := ix.AddBatch(ids[i:j], vecs[i:j]); err != nil {
			panic(err)
		}
	}
	return ix
}

func (d *benchData) index() *Index {
	if d.ix == nil {
		d.ix = build(d.w.Docs, Options{})
	}
	return d.ix
}

func (d *benchData) exact() [][]Scored {
	if d.truth == nil {
		ix := d.index()
		for _, q := range d.w.Queries {
			d.truth = append(d.truth, ix.SearchExact(q, workload.TopK, nil))
		}
	}
	return d.truth
}

// recallAt is the mean over queries of |got ∩ want| / len(want), by ID.
func recallAt(got, want [][]Scored) float64 {
	return workload.Recall(got, want, func(s Scored) uint32 { return s.ID })
}

// BenchmarkDense: one op = one top-50 query, cycling over the 200 queries;
// the index is built outside the timer and recall@50 is against exact search.
func BenchmarkDense(b *testing.B) {
	names, data := benchCases()
	for i, name := range names {
		b.Run(name, func(b *testing.B) {
			d := data[i]()
			ix, truth := d.index(), d.exact()
			got := make([][]Scored, len(d.w.Queries))
			b.ReportAllocs()
			cpu0 := workload.CPUTime()
			q := 0
			for b.Loop() {
				got[q] = ix.Search(d.w.Queries[q], workload.TopK, nil)
				if q++; q == len(d.w.Queries) {
					q = 0
				}
			}
			b.ReportMetric(float64(workload.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			for i := range got {
				if got[i] == nil {
					got[i] = ix.Search(d.w.Queries[i], workload.TopK, nil)
				}
			}
			b.ReportMetric(recallAt(got, truth), "recall@50")
		})
	}
}

// BenchmarkDenseIngest: one op = building the index of N vectors. heapMB is
// HeapAlloc after GC with the index alive minus the same before the build.
func BenchmarkDenseIngest(b *testing.B) {
	names, data := benchCases()
	for i, name := range names {
		b.Run(name, func(b *testing.B) {
			d := data[i]()
			b.ReportAllocs()
			var ix *Index
			mb := workload.HeapMB(func() {
				for b.Loop() {
					b.StopTimer()
					ix = nil
					b.StartTimer()
					ix = build(d.w.Docs, Options{})
				}
			})
			b.ReportMetric(mb, "heapMB")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkCrossover compares exact and approximate top-50 search on the
// dense workload at sizes around DefaultExactThreshold, to place it.
func BenchmarkCrossover(b *testing.B) {
	d := benchWorkload(10_000)
	for _, n := range []int{500, 1000, 2000, 4000, 8000} {
		approx := build(d.w.Docs[:n], Options{ExactThreshold: -1})
		for _, mode := range []string{"exact", "approx"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) {
				q := 0
				for b.Loop() {
					qv := d.w.Queries[q%workload.NumQueries]
					if mode == "exact" {
						approx.SearchExact(qv, workload.TopK, nil)
					} else {
						approx.Search(qv, workload.TopK, nil)
					}
					q++
				}
			})
		}
	}
}

// BenchmarkReadIndex: one op = ReadIndex of the clustered index of N
// vectors from memory (what a reopen costs beyond reading the file: no
// re-encoding, so it runs near memory bandwidth, checksum included).
func BenchmarkReadIndex(b *testing.B) {
	for _, n := range workload.Sizes() {
		b.Run(fmt.Sprintf("clustered/N=%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			if _, err := benchOf(true, n).index().WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadIndex(bytes.NewReader(buf.Bytes()), Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len())/float64(n), "file-B/vector")
		})
	}
}

// BenchmarkSearchAmong: one op = top-50 over 1,000 to 33,333 listed ids of
// the clustered index of 100k (every 100th to every 3rd id), the plan for a
// filter whose matches a payload index lists, by each way of scoring them:
// exact (every listed vector read and scored) and coded (ranked by their
// codes, the best scored exactly), on the index in memory (float32
// vectors) and as ReadIndexAt leaves it on disk (int8 copies scored).
// recall@50 is against the exact top 50 of the listed ids.
func BenchmarkSearchAmong(b *testing.B) {
	d := benchOf(true, 100_000)
	var buf bytes.Buffer
	if _, err := d.index().WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	onDisk, err := ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{ResidentLimit: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, every := range []int{100, 50, 20, 10, 5, 3} {
		var ids []uint32
		for id := 3; id < 100_000; id += every {
			ids = append(ids, uint32(id))
		}
		want := make([][]Scored, len(d.w.Queries))
		for q, v := range d.w.Queries {
			want[q] = d.index().SearchExact(v, workload.TopK, func(id uint32) bool { return id%uint32(every) == 3%uint32(every) })
		}
		for _, layout := range []string{"resident", "on-disk"} {
			ix := d.index()
			if layout == "on-disk" {
				ix = onDisk
			}
			for _, how := range []string{"exact", "coded"} {
				b.Run(fmt.Sprintf("ids=%d/%s/%s", len(ids), layout, how), func(b *testing.B) {
					mode := amongExact
					if how == "coded" {
						mode = amongCode
					}
					got := make([][]Scored, len(d.w.Queries))
					q := 0
					for b.Loop() {
						i := q % len(d.w.Queries)
						got[i] = ix.searchAmong(d.w.Queries[i], workload.TopK, ids, mode)
						q++
					}
					if q >= len(d.w.Queries) {
						b.ReportMetric(recallAt(got, want), "recall@50")
					}
				})
			}
		}
	}
}

// BenchmarkOnDisk: one op = one top-50 query, as BenchmarkDense, on the
// clustered index of N vectors as ReadIndexAt leaves it when it holds more
// than its resident limit (float32 vectors in the file, int8 copies
// scored) beside the same index read whole (resident). recall@50 is
// against exact search; heap-B/vector is the index's live heap.
func BenchmarkOnDisk(b *testing.B) {
	n := 100_000
	d := benchOf(true, n)
	truth := d.exact()
	var buf bytes.Buffer
	if _, err := d.index().WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name  string
		limit int
	}{{"resident", -1}, {"on-disk", 1}} {
		b.Run(fmt.Sprintf("clustered/N=%d/%s", n, mode.name), func(b *testing.B) {
			var ix *Index
			heap := workload.HeapMB(func() {
				var err error
				if ix, err = ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{ResidentLimit: mode.limit}); err != nil {
					b.Fatal(err)
				}
			})
			if ix.Resident() != (mode.limit < 0) {
				b.Fatalf("resident %v", ix.Resident())
			}
			got := make([][]Scored, len(d.w.Queries))
			cpu0 := workload.CPUTime()
			q := 0
			for b.Loop() {
				got[q] = ix.Search(d.w.Queries[q], workload.TopK, nil)
				if q++; q == len(d.w.Queries) {
					q = 0
				}
			}
			b.ReportMetric(float64(workload.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			for i := range got {
				if got[i] == nil {
					got[i] = ix.Search(d.w.Queries[i], workload.TopK, nil)
				}
			}
			b.ReportMetric(recallAt(got, truth), "recall@50")
			b.ReportMetric(heap*(1<<20)/float64(n), "heap-B/vector")
		})
	}
}

// BenchmarkOnDiskCorpus: one op = one top-50 query, cycling over the
// set's queries, on the index of N chunks of a public retrieval set
// (internal/workload.LoadCorpus, embedded by the offline hashing embedder)
// as ReadIndexAt leaves it past its resident limit, as BenchmarkOnDisk
// does; recall@50 is against exact search of the same index. The set is
// ../shared/data/retrieval/xquad_en of the repository's parent, or
// $ADAPTRAG_CORPUS; the benchmark is skipped when it is not there.
// Building the index takes about half a minute.
func BenchmarkOnDiskCorpus(b *testing.B) {
	const n = 100_000
	dir := os.Getenv("ADAPTRAG_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "data", "retrieval", "xquad_en")
	}
	c, err := workload.LoadCorpus(dir, n)
	if err != nil {
		b.Skipf("corpus: %v", err)
	}
	ctx := context.Background()
	h := embed.NewHashing(embed.HashingConfig{})
	docs, err := embed.EmbedAll(ctx, h, c.Docs, 1024, nil)
	if err != nil {
		b.Fatal(err)
	}
	queries, err := h.Embed(ctx, c.Queries)
	if err != nil {
		b.Fatal(err)
	}
	built := New(len(docs[0]), Options{})
	ids := make([]uint32, len(docs))
	for i := range ids {
		ids[i] = uint32(i)
	}
	for i := 0; i < len(docs); i += 1000 {
		if err := built.AddBatch(ids[i:min(i+1000, len(docs))], docs[i:min(i+1000, len(docs))]); err != nil {
			b.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := built.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	built = nil
	ix, err := ReadIndexAt(bytes.NewReader(buf.Bytes()), 0, Options{})
	if err != nil {
		b.Fatal(err)
	}
	truth := make([][]Scored, len(queries))
	for i, q := range queries {
		truth[i] = ix.SearchExact(q, workload.TopK, nil)
	}
	b.Run(fmt.Sprintf("%s/N=%d/on-disk", filepath.Base(dir), n), func(b *testing.B) {
		got := make([][]Scored, len(queries))
		cpu0 := workload.CPUTime()
		q := 0
		for b.Loop() {
			got[q] = ix.Search(queries[q], workload.TopK, nil)
			if q++; q == len(queries) {
				q = 0
			}
		}
		b.ReportMetric(float64(workload.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		for i := range got {
			if got[i] == nil {
				got[i] = ix.Search(queries[i], workload.TopK, nil)
			}
		}
		b.ReportMetric(recallAt(got, truth), "recall@50")
	})
}

// BenchmarkKernels: one op = one inner product of 384 dimensions (float32
// by float32, float32 by int8) or the 1-bit scan of 1,024 codes of 384
// dimensions, by the kernels this machine selects and by the Go loops.
func BenchmarkKernels(b *testing.B) {
	const dim, n = 384, 1024
	r := rand.New(rand.NewPCG(71, 72))
	q, v, c := make([]float32, dim), make([]float32, dim), make([]int8, dim)
	for i := range q {
		q[i], v[i], c[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), int8(r.IntN(255)-127)
	}
	var sink float32
	b.Run("dot/kernel", func(b *testing.B) {
		for b.Loop() {
			sink += dot(q, v)
		}
	})
	b.Run("dot/go", func(b *testing.B) {
		for b.Loop() {
			sink += dotTail(q, v, 0, [4]float32{})
		}
	})
	b.Run("dot8/kernel", func(b *testing.B) {
		for b.Loop() {
			sink += dot8Q(q, c)
		}
	})
	b.Run("dot8/go", func(b *testing.B) {
		for b.Loop() {
			sink += dot8(q, c)
		}
	})
	codes := make([]uint64, 6*n)
	for i := range codes {
		codes[i] = r.Uint64()
	}
	factor, pop, est := make([]float32, n), make([]uint16, n), make([]float32, n)
	planes := make([]uint64, 24)
	for i := range planes {
		planes[i] = r.Uint64()
	}
	qp := queryPlanes{p0: planes[0:6], p1: planes[6:12], p2: planes[12:18], p3: planes[18:24], lo: -0.1, delta: 0.01}
	for _, mode := range []struct {
		name string
		all  []uint64
	}{{"scan1024/kernel", planes}, {"scan1024/go", nil}} {
		qp.all = mode.all // without the planes in one array, the Go loop
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				qp.scan(codes, factor, pop, 0, est)
			}
		})
	}
	_ = sink
}
