package bm25

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// Benchmarks named and measured like the shared retrieval benchmark's peers
// on its lexical workload (internal/workload): one op of BenchmarkBM25 is
// one top-50 query, cycling over the 200 queries, on an index built once off
// the clock; one op of BenchmarkBM25Ingest is a whole index, and heapMB is
// the live heap it adds (HeapAlloc after GC with the index alive, minus the
// same before).
//
//	go test -run '^$' -bench '^BenchmarkBM25$' -benchtime 200x -count 3 ./retrieval/bm25/
//	go test -run '^$' -bench 'Ingest$' -benchtime 1x -count 3 ./retrieval/bm25/

// work keeps the workloads of every size live for the whole run.
var work workload.Cache

// benchIndex keeps each size's index across sub-benchmarks and -count.
// Benchmarks run one at a time, so it needs no lock.
var benchIndex = map[int]*Index{}

func build(docs []string) *Index {
	ix := New(Params{})
	for i, d := range docs {
		ix.Add(uint32(i), d)
	}
	return ix
}

func BenchmarkBM25(b *testing.B) {
	for _, n := range workload.Sizes() {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := work.Lexical(n)
			ix, ok := benchIndex[n]
			if !ok {
				ix = build(w.Docs)
				benchIndex[n] = ix
			}
			b.ReportAllocs()
			q := 0
			for b.Loop() {
				ix.Search(w.Queries[q], workload.TopK, nil)
				if q++; q == workload.NumQueries {
					q = 0
				}
			}
		})
	}
}

// BenchmarkBM25Walks times the two walks Search chooses between by the
// index's size (taatSlots) on the same queries: term at a time (run) and
// document at a time (runDocs). ADAPTRAG_BENCH_1M=1 adds a million
// documents, where the choice flips (an index of about 15 s to build):
//
//	ADAPTRAG_BENCH_1M=1 go test -run '^$' -bench Walks -count 3 ./retrieval/bm25/
func BenchmarkBM25Walks(b *testing.B) {
	sizes := workload.Sizes()
	if os.Getenv("ADAPTRAG_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		w := work.Lexical(n)
		ix, ok := benchIndex[n]
		if !ok {
			ix = build(w.Docs)
			benchIndex[n] = ix
		}
		toks := make([][]string, len(w.Queries))
		for i, q := range w.Queries {
			toks[i] = ix.an.Tokens(q)
		}
		walks := []struct {
			name string
			run  func(*query) []Scored
		}{
			{"terms", func(q *query) []Scored { return q.run(ix, workload.TopK, nil) }},
			{"docs", func(q *query) []Scored { return q.runDocs(ix, workload.TopK, nil) }},
		}
		for _, walk := range walks {
			b.Run(fmt.Sprintf("N=%d/%s", n, walk.name), func(b *testing.B) {
				q := 0
				for b.Loop() {
					walk.run(ix.prepare(toks[q]))
					if q++; q == len(toks) {
						q = 0
					}
				}
			})
		}
	}
}

func BenchmarkBM25Ingest(b *testing.B) {
	for _, n := range workload.Sizes() {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			w := work.Lexical(n)
			delete(benchIndex, n)
			b.ReportAllocs()
			var ix *Index
			mb := workload.HeapMB(func() {
				for b.Loop() {
					ix = nil
					ix = build(w.Docs)
				}
			})
			b.ReportMetric(mb, "heapMB")
			benchIndex[n] = ix
		})
	}
}

// BenchmarkBM25ReadIndex: one op = ReadIndex of the whole index of the
// lexical workload from memory (what reopening a store costs instead of
// Add for every document); bytes/doc is the size of the file. The search
// benchmark on the read index (queries as BenchmarkBM25's) checks that an
// index read back searches as fast as one built.
//
//	go test -run '^$' -bench 'ReadIndex' -count 3 ./retrieval/bm25/
func BenchmarkBM25ReadIndex(b *testing.B) {
	for _, n := range workload.Sizes() {
		w, file := benchFile(b, n)
		var read *Index
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if read, err = ReadIndex(bytes.NewReader(file), Params{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(file))/float64(n), "bytes/doc")
		})
		b.Run(fmt.Sprintf("search/N=%d", n), func(b *testing.B) { benchQueries(b, read, w) })
	}
}

// benchFile returns the lexical workload of n documents and the file
// WriteTo writes of its index, built once.
func benchFile(b *testing.B, n int) (workload.Lexical, []byte) {
	w := work.Lexical(n)
	ix, ok := benchIndex[n]
	if !ok {
		ix = build(w.Docs)
		benchIndex[n] = ix
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	return w, buf.Bytes()
}

// benchQueries is one top-50 query of w an op, cycling over them.
func benchQueries(b *testing.B, ix *Index, w workload.Lexical) {
	q := 0
	for b.Loop() {
		ix.Search(w.Queries[q], workload.TopK, nil)
		if q++; q == workload.NumQueries {
			q = 0
		}
	}
}
