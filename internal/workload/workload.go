// Package workload is the synthetic retrieval workload that the benchmarks
// of retrieval/vector, retrieval/memstore and retrieval/bm25 share, plus the
// measurement helpers they report with (HeapMB, Recall, CPUTime).
//
// NewClustered is a second dense workload, of this project only: a mixture
// of many anisotropic clusters with a decaying spectrum, closer to real
// sentence embeddings than the isotropic NewDense, on which every index is
// at its worst. Tune on both; report both.
//
// The generator is copied, with attribution, from NewDense and NewLexical in
// ../shared/bench/retrieval/gen.go (relative to the repository root; package
// retrievalbench), where existing
// Go retrieval libraries were measured on it. Our benchmarks keep that
// harness's names and definition of an op so that the two outputs can be
// compared as ratios. That comparison is only valid while NewDense and
// NewLexical stay bit-identical to gen.go: do not change them, and the tests
// pin the published fingerprints to catch any drift.
package workload

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
)

// The workload's shape, as published with gen.go. math/rand/v2 pins its
// outputs, so the same n always gives the same workload.
const (
	// Dim is the dimension of the dense vectors.
	Dim = 384
	// NumQueries is the number of queries drawn after the documents.
	NumQueries = 200
	// TopK is the number of results every benchmark query asks for.
	TopK = 50
	// DocTokens is the number of tokens of a lexical document.
	DocTokens = 60
	// QueryTokens is the number of tokens of a lexical query.
	QueryTokens = 4
)

// Sizes returns the document counts every benchmark runs at, as the
// sub-benchmarks N=10000 and N=100000. The slice is fresh on every call.
func Sizes() []int { return []int{10_000, 100_000} }

// Dense is the dense workload: unit vectors of Dim float32 whose dot
// product is their cosine similarity.
type Dense struct {
	// Docs are the n document vectors. They share one backing array.
	Docs [][]float32
	// Queries are the NumQueries query vectors, drawn after Docs from the
	// same stream, so they differ with n.
	Queries [][]float32
}

// NewDense draws the dense workload for n documents (n < 0 counts as 0)
// from one PCG(1, 2) stream: each vector is Dim normal draws, normalised
// with a float64 sum of squares in index order and without fused
// multiply-add. It must stay bit-identical to gen.go's NewDense.
func NewDense(n int) Dense {
	n = max(n, 0)
	r := rand.New(rand.NewPCG(1, 2))
	all := make([][]float32, n+NumQueries)
	flat := make([]float32, len(all)*Dim)
	for i := range all {
		v := flat[i*Dim : (i+1)*Dim : (i+1)*Dim]
		var s float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			s += float64(float64(v[j]) * float64(v[j])) // the conversion forbids FMA
		}
		norm := math.Sqrt(s)
		for j := range v {
			v[j] = float32(float64(v[j]) / norm)
		}
		all[i] = v
	}
	return Dense{Docs: all[:n:n], Queries: all[n:]}
}

// Fingerprint is FNV-1a 64 over the little-endian float32 bits of every
// document and then every query, as the published check values define it.
func (d Dense) Fingerprint() uint64 {
	h := fnv.New64a()
	b := make([]byte, 0, 4*Dim)
	for _, vs := range [][][]float32{d.Docs, d.Queries} {
		for _, v := range vs {
			b = b[:0]
			for _, x := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
			h.Write(b)
		}
	}
	return h.Sum64()
}

// Lexical is the lexical workload: texts of whitespace-separated tokens
// "t<rank>" with Zipf-distributed ranks, for BM25.
type Lexical struct {
	// Docs are the n documents of DocTokens tokens each.
	Docs []string
	// Queries are the NumQueries queries of QueryTokens tokens, drawn after
	// Docs; a query may repeat a token.
	Queries []string
}

// NewLexical draws the lexical workload for n documents (n < 0 counts as
// 0) from one Zipf(s=1.1, v=1, imax=49999) stream over PCG(3, 4). It must
// stay bit-identical to gen.go's NewLexical.
func NewLexical(n int) Lexical {
	n = max(n, 0)
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
	w := Lexical{Docs: make([]string, n), Queries: make([]string, NumQueries)}
	for i := range w.Docs {
		w.Docs[i] = text(DocTokens)
	}
	for i := range w.Queries {
		w.Queries[i] = text(QueryTokens)
	}
	return w
}

// Fingerprint is FNV-1a 64 over every document and then every query, each
// followed by "\n", as the published check values define it.
func (l Lexical) Fingerprint() uint64 {
	h := fnv.New64a()
	for _, texts := range [][]string{l.Docs, l.Queries} {
		for _, s := range texts {
			h.Write([]byte(s))
			h.Write([]byte{'\n'})
		}
	}
	return h.Sum64()
}

// Cache draws each workload once and hands the same one to every later
// caller, so that the benchmarks of one process (sub-benchmarks, -count
// runs, dense and hybrid alike) reuse it instead of regenerating it, and it
// stays live for the whole run as the peer harness keeps it: every
// heap measurement then starts from the same heap. The zero value is ready
// to use, and a Cache is safe for concurrent use. Callers must treat the
// returned workloads as read-only, since they are shared.
type Cache struct {
	mu        sync.Mutex
	dense     map[int]Dense
	lex       map[int]Lexical
	clustered map[int]Clustered
}

// Dense returns NewDense(n), drawn on the first call for n.
func (c *Cache) Dense(n int) Dense { return cached(&c.mu, &c.dense, n, NewDense) }

// Lexical returns NewLexical(n), drawn on the first call for n.
func (c *Cache) Lexical(n int) Lexical { return cached(&c.mu, &c.lex, n, NewLexical) }

// cached returns (*m)[n], drawing it first if absent. The draw happens
// under mu, so concurrent first callers wait for one draw instead of each
// allocating a workload.
func cached[W any](mu *sync.Mutex, m *map[int]W, n int, draw func(int) W) W {
	mu.Lock()
	defer mu.Unlock()
	w, ok := (*m)[n]
	if !ok {
		if *m == nil {
			*m = map[int]W{}
		}
		w = draw(n)
		(*m)[n] = w
	}
	return w
}
