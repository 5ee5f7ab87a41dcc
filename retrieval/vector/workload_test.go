package vector

// The benchmark workload generator, copied from NewDense and NewLexical in
// /work/shared/bench/retrieval/gen.go (package retrievalbench) so that this
// package's benchmarks run the peers' workload bit for bit;
// TestWorkloadFingerprint checks the copy against the published fingerprint.

import (
	"math"
	"math/rand/v2"
	"strconv"
)

const (
	benchDim         = 384
	benchQueries     = 200
	benchTopK        = 50
	benchDocTokens   = 60
	benchQueryTokens = 4
)

// denseWorkload is the dense workload: unit vectors of benchDim float32.
type denseWorkload struct{ Docs, Queries [][]float32 }

// newDense draws the dense workload for n documents.
func newDense(n int) denseWorkload {
	r := rand.New(rand.NewPCG(1, 2))
	all := make([][]float32, n+benchQueries)
	flat := make([]float32, len(all)*benchDim)
	for i := range all {
		v := flat[i*benchDim : (i+1)*benchDim : (i+1)*benchDim]
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
	return denseWorkload{Docs: all[:n:n], Queries: all[n:]}
}

// newLexical draws the lexical workload for n documents (used by the
// memstore benchmarks through their own copy; kept here so that the
// fingerprint test covers the whole generator).
func newLexical(n int) (docs, queries []string) {
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
	docs, queries = make([]string, n), make([]string, benchQueries)
	for i := range docs {
		docs[i] = text(benchDocTokens)
	}
	for i := range queries {
		queries[i] = text(benchQueryTokens)
	}
	return docs, queries
}
