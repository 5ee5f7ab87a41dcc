package qdrant_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
)

// BenchmarkSearch measures one search through the go-client, gRPC over
// loopback and the fake server's linear scan of 1,000 chunks (dim 64). It
// shows the cost per call of this path, not Qdrant's (the allocations
// include the in-process server's):
//
//	go test -run '^$' -bench Search -benchtime 2s ./retrieval/qdrant/
func BenchmarkSearch(b *testing.B) {
	srv := qdranttest.Start(b)
	const dim, n = 64, 1000
	st, err := qdrant.Open(context.Background(), fakeConfig(srv, "bench", dim))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"leave", "policy", "vpn", "laptop", "invoice", "refund", "password", "holiday", "salary", "printer"}
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	chunks := make([]retrieval.Chunk, n)
	for i := range chunks {
		text := ""
		for range 20 {
			text += words[rng.IntN(len(words))] + " "
		}
		chunks[i] = retrieval.Chunk{ID: fmt.Sprint(i), DocID: fmt.Sprint(i / 10), Text: text, Vector: randVec()}
	}
	if err := st.Upsert(context.Background(), chunks); err != nil {
		b.Fatal(err)
	}
	req := retrieval.Request{Text: "vpn password reset", Vector: randVec(), K: 8}
	for _, k := range []struct {
		name string
		fn   func(context.Context, retrieval.Request) ([]retrieval.Hit, error)
	}{{"dense", st.SearchDense}, {"sparse", st.SearchSparse}, {"hybrid", st.SearchHybrid}} {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.fn(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
