package memstore

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
)

// benchWorkload pairs dense document i with lexical document i, and query
// q's vector with lexical query q.
type benchWorkload struct {
	chunks  []retrieval.Chunk
	queries []retrieval.Request
	store   *Store
}

// work keeps the workloads of every size live for the whole run, as the
// peer harness does.
var work workload.Cache

// benchCache holds each size's chunks, queries and built store across
// sub-benchmarks and -count. Benchmarks run one at a time, so it needs no
// lock.
var benchCache = map[int]*benchWorkload{}

func hybridWorkload(n int) *benchWorkload {
	if w, ok := benchCache[n]; ok {
		return w
	}
	d, l := work.Dense(n), work.Lexical(n)
	w := &benchWorkload{}
	for i := range n {
		w.chunks = append(w.chunks, retrieval.Chunk{
			ID: "c" + strconv.Itoa(i), DocID: "d" + strconv.Itoa(i/8), Tenant: "bench", Source: "s",
			ContentType: retrieval.ContentText, Text: l.Docs[i], Vector: d.Docs[i],
		})
	}
	for q := range workload.NumQueries {
		w.queries = append(w.queries, retrieval.Request{
			Scope: retrieval.Scope{Tenant: "bench"}, Text: l.Queries[q], Vector: d.Queries[q], K: workload.TopK,
		})
	}
	benchCache[n] = w
	return w
}

func ingest(b *testing.B, chunks []retrieval.Chunk, o Options) *Store {
	s, err := Open(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(chunks); i += 1000 {
		if err := s.Upsert(context.Background(), chunks[i:min(i+1000, len(chunks))]); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkHybrid: one op = one hybrid search (K 50, 50 candidates per leg,
// RRF) cycling over the 200 query pairs of the workload, on an in-memory
// store built outside the timer. p50-ms and p99-ms are per-op latencies.
func BenchmarkHybrid(b *testing.B) {
	for _, n := range workload.Sizes() {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := hybridWorkload(n)
			if w.store == nil {
				w.store = ingest(b, w.chunks, Options{})
			}
			ctx := context.Background()
			var lat []time.Duration
			b.ReportAllocs()
			cpu0 := workload.CPUTime()
			q := 0
			for b.Loop() {
				t0 := time.Now()
				hits, err := w.store.SearchHybrid(ctx, w.queries[q])
				lat = append(lat, time.Since(t0))
				if err != nil || len(hits) != workload.TopK {
					b.Fatalf("query %d: %d hits, %v", q, len(hits), err)
				}
				if q++; q == len(w.queries) {
					q = 0
				}
			}
			b.ReportMetric(float64(workload.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		})
	}
}

// BenchmarkIngest: one op = an in-memory store of N chunks built by
// Upserts of 1000. heapMB as in the peer harness: live heap after GC with
// the store alive minus the same before the build.
func BenchmarkIngest(b *testing.B) {
	for _, n := range workload.Sizes() {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := hybridWorkload(n)
			b.ReportAllocs()
			var s *Store
			mb := workload.HeapMB(func() {
				for b.Loop() {
					s = ingest(b, w.chunks, Options{})
				}
			})
			b.ReportMetric(mb, "heapMB")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkUpsertDurable: one op = one fsynced Upsert of 64 workload chunks
// into a store with a directory; the throughput a crash-safe ingest gets.
func BenchmarkUpsertDurable(b *testing.B) {
	w := hybridWorkload(10_000)
	s, err := Open(context.Background(), Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i, whole := 0, len(w.chunks)/64*64
	for b.Loop() {
		lo := (i * 64) % whole
		if err := s.Upsert(context.Background(), w.chunks[lo:lo+64]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkOpen: one op = opening a directory holding a snapshot of N
// chunks (load and index rebuild).
func BenchmarkOpen(b *testing.B) {
	n := 100_000
	w := hybridWorkload(n)
	dir := b.TempDir()
	s := ingest(b, w.chunks, Options{Dir: dir, NoSync: true, CompactBytes: -1})
	if err := s.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	s.Close()
	for b.Loop() {
		s, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkFilteredCrossover measures where the planner's exact path
// (scoring the matching set) and its index path (searching the index with
// the posting-list accept func) cost the same: one op = one top-50 search
// of an in-memory store of 100,000 workload chunks, each in one of 1000
// sources, with a source filter admitting the given share of them, by
// each path forced.
func BenchmarkFilteredCrossover(b *testing.B) {
	const n = 100_000
	w := hybridWorkload(n)
	chunks := slices.Clone(w.chunks)
	for i := range chunks {
		chunks[i].Source = "s" + strconv.Itoa(int(uint32(i)*2654435761%1000))
	}
	s := ingest(b, chunks, Options{})
	defer s.Close()
	ctx := context.Background()
	for _, permille := range []int{1, 10, 30, 60, 100, 200, 300} {
		var vals []string
		for v := range permille {
			vals = append(vals, "s"+strconv.Itoa(v))
		}
		for _, path := range []struct {
			name  string
			limit int
		}{{"exact", 1 << 30}, {"index", -1}} {
			for _, leg := range []string{"dense", "bm25"} {
				b.Run(fmt.Sprintf("share=%.1f%%/%s/%s", float64(permille)/10, leg, path.name), func(b *testing.B) {
					s.exactLimit = path.limit
					defer func() { s.exactLimit = 0 }()
					var lat []time.Duration
					q := 0
					cpu0 := workload.CPUTime()
					for b.Loop() {
						req := w.queries[q]
						req.Filter = retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: vals}}}
						t0 := time.Now()
						var err error
						if leg == "dense" {
							_, err = s.SearchDense(ctx, req)
						} else {
							_, err = s.SearchSparse(ctx, req)
						}
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						q = (q + 1) % len(w.queries)
					}
					// Process CPU time per op: on a shared machine it is
					// steadier than wall time.
					b.ReportMetric(float64(workload.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
				})
			}
		}
	}
}

// BenchmarkCompactionStall: one op = one compaction of a durable store of
// 30,000 workload chunks while a writer upserts batches of 64 (fsynced) as
// fast as it can. compact-ms is how long the compaction took and
// longest-upsert-ms the longest write meanwhile: a compaction that held
// writes off for its whole run would make the two equal.
func BenchmarkCompactionStall(b *testing.B) {
	const n = 30_000
	w := hybridWorkload(100_000)
	dir := b.TempDir()
	s := ingest(b, w.chunks[:n], Options{Dir: dir, CompactBytes: -1})
	defer s.Close()
	ctx := context.Background()
	var compact, longest, writes float64
	next := n
	for b.Loop() {
		done := make(chan error, 1)
		t0 := time.Now()
		go func() { done <- s.Compact(ctx) }()
		var worst time.Duration
	loop:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break loop
			default:
			}
			t1 := time.Now()
			if err := s.Upsert(ctx, w.chunks[next:next+64]); err != nil {
				b.Fatal(err)
			}
			worst = max(worst, time.Since(t1))
			writes++
			if next += 64; next+64 > len(w.chunks) {
				next = n
			}
		}
		compact += float64(time.Since(t0)) / 1e6
		longest = max(longest, float64(worst)/1e6)
	}
	b.ReportMetric(compact/float64(b.N), "compact-ms")
	b.ReportMetric(longest, "longest-upsert-ms")
	b.ReportMetric(writes/float64(b.N), "writes/compaction")
}

// BenchmarkWideFilter measures where denseWide's plan (an unfiltered search
// and a post-check) stops paying against the probe with an accept func:
// one op = one top-50 dense search of an in-memory store of 100,000
// clustered chunks in 100 sources, filtered to the given share of them
// (that many sources), by each plan forced.
func BenchmarkWideFilter(b *testing.B) {
	const n = 100_000
	d := work.Clustered(n)
	chunks := make([]retrieval.Chunk, n)
	for i := range chunks {
		chunks[i] = retrieval.Chunk{ID: "c" + strconv.Itoa(i), DocID: "d" + strconv.Itoa(i/8), Tenant: "bench",
			Source: "s" + strconv.Itoa(i%100), ContentType: retrieval.ContentText, Text: "w", Vector: d.Docs[i]}
	}
	s := ingest(b, chunks, Options{})
	defer s.Close()
	ctx := context.Background()
	for _, p := range []int{50, 70, 80, 90, 99} {
		var vals []string
		for v := range p {
			vals = append(vals, "s"+strconv.Itoa(v))
		}
		f := retrieval.Filter{Must: []retrieval.Condition{{Key: retrieval.KeySource, Values: vals}}}
		for _, plan := range []string{"wide", "probe"} {
			b.Run(fmt.Sprintf("share=%d%%/%s", p, plan), func(b *testing.B) {
				s.noWide = plan == "probe"
				defer func() { s.noWide = false }()
				q := 0
				cpu0 := workload.CPUTime()
				for b.Loop() {
					req := retrieval.Request{Scope: retrieval.Scope{Tenant: "bench"}, Filter: f, Vector: d.Queries[q%len(d.Queries)], K: workload.TopK}
					if _, err := s.SearchDense(ctx, req); err != nil {
						b.Fatal(err)
					}
					q++
				}
				b.ReportMetric(float64(workload.CPUTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
