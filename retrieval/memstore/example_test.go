package memstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := memstore.Open(ctx, memstore.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	err = s.Upsert(ctx, []retrieval.Chunk{
		{ID: "hr-1", DocID: "handbook", Tenant: "acme", Source: "hr", Text: "Employees get 25 vacation days a year.", Vector: []float32{1, 0, 0}},
		{ID: "it-1", DocID: "wiki", Tenant: "acme", Source: "it", Text: "Reset your VPN password in the portal.", Vector: []float32{0, 1, 0}},
		{ID: "other", DocID: "wiki", Tenant: "globex", Source: "it", Text: "Globex VPN password rules.", Vector: []float32{0, 1, 0}},
	})
	if err != nil {
		log.Fatal(err)
	}
	s.Close()

	// Reopen: the log is replayed.
	s, err = memstore.Open(ctx, memstore.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	hits, err := s.SearchHybrid(ctx, retrieval.Request{
		Scope:  retrieval.Scope{Tenant: "acme"}, // globex's chunk is never seen
		Text:   "vpn password",
		Vector: []float32{0.1, 1, 0},
		K:      2,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %s %.4f\n", h.Chunk.ID, h.Method, h.Score)
	}
	// Output:
	// it-1 hybrid 0.0328
	// hr-1 hybrid 0.0161
}
