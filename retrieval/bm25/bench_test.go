package bm25

import (
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks named and measured like the shared retrieval benchmark's peers
// (see workload_test.go): one op of BenchmarkBM25 is one top-50 query,
// cycling over the 200 queries, on an index built once off the clock; one op
// of BenchmarkBM25Ingest is a whole index, and heapMB is the live heap it
// adds (HeapAlloc after GC with the index alive, minus the same before).
//
//	go test -run '^$' -bench '^BenchmarkBM25$' -benchtime 200x -count 3 ./retrieval/bm25/
//	go test -run '^$' -bench 'Ingest$' -benchtime 1x -count 3 ./retrieval/bm25/

var benchSizes = []int{10_000, 100_000}

// benchCache keeps workloads and indexes across sub-benchmarks and -count.
var benchCache = struct {
	work map[int]lexical
	ix   map[int]*Index
}{map[int]lexical{}, map[int]*Index{}}

func workload(n int) lexical {
	w, ok := benchCache.work[n]
	if !ok {
		w = newLexical(n)
		benchCache.work[n] = w
	}
	return w
}

func build(docs []string) *Index {
	ix := New(Params{})
	for i, d := range docs {
		ix.Add(uint32(i), d)
	}
	return ix
}

func BenchmarkBM25(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := workload(n)
			ix, ok := benchCache.ix[n]
			if !ok {
				ix = build(w.docs)
				benchCache.ix[n] = ix
			}
			b.ReportAllocs()
			q := 0
			for b.Loop() {
				ix.Search(w.queries[q], benchTopK, nil)
				if q++; q == benchQueries {
					q = 0
				}
			}
		})
	}
}

func BenchmarkBM25Ingest(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := workload(n)
			delete(benchCache.ix, n)
			b.ReportAllocs()
			before := liveHeap()
			var ix *Index
			for b.Loop() {
				ix = nil
				ix = build(w.docs)
			}
			b.ReportMetric(float64(int64(liveHeap()-before))/(1<<20), "heapMB")
			benchCache.ix[n] = ix
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
