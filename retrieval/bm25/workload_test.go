package bm25

// The lexical workload of the shared retrieval benchmark
// (/work/shared/bench/retrieval, gen.go, NewLexical), reproduced here so that
// this package's benchmarks run the same queries over the same documents as
// the peers measured there (bleve's BM25 among them) and can be compared as
// a ratio. TestWorkloadFingerprint pins it to the values of that README.

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

const (
	benchQueries     = 200
	benchTopK        = 50
	benchDocTokens   = 60
	benchQueryTokens = 4
)

type lexical struct{ docs, queries []string }

// newLexical draws N documents of 60 tokens, then 200 queries of 4 tokens,
// from one Zipf(1.1, 1, 49999) stream over PCG(3, 4); a token is "t"+rank.
func newLexical(n int) lexical {
	z := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, 49_999)
	text := func(tokens int) string {
		b := make([]byte, 0, 7*tokens)
		for j := 0; j < tokens; j++ {
			if j > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(append(b, 't'), z.Uint64(), 10)
		}
		return string(b)
	}
	w := lexical{docs: make([]string, n), queries: make([]string, benchQueries)}
	for i := range w.docs {
		w.docs[i] = text(benchDocTokens)
	}
	for i := range w.queries {
		w.queries[i] = text(benchQueryTokens)
	}
	return w
}

// TestWorkloadFingerprint checks the generator against the README's FNV-1a
// 64 fingerprint (every document, then every query, each followed by "\n").
func TestWorkloadFingerprint(t *testing.T) {
	w := newLexical(10_000)
	h := fnv.New64a()
	for _, s := range append(w.docs, w.queries...) {
		h.Write([]byte(s + "\n"))
	}
	if got, want := h.Sum64(), uint64(0xfbe884a192af0d42); got != want {
		t.Fatalf("fingerprint %#016x, want %#016x", got, want)
	}
	if !strings.HasPrefix(w.docs[0], "t95 t1 t0 t9 t17433 ") || w.queries[0] != "t2388 t31 t959 t281" {
		t.Fatalf("spot check: doc 0 %.40q, query 0 %q", w.docs[0], w.queries[0])
	}
}
