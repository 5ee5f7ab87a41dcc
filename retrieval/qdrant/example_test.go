package qdrant_test

import (
	"context"
	"fmt"
	"log"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
)

// A hybrid search over two tenants' chunks. The fake server stands in for
// Qdrant here; against a real one only the Config changes.
func Example() {
	srv, err := qdranttest.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	st, err := qdrant.Open(ctx, qdrant.Config{Host: srv.Host(), Port: srv.Port(), Collection: "handbook", Dim: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	err = st.Upsert(ctx, []retrieval.Chunk{
		{ID: "leave-1", DocID: "leave", Tenant: "acme", Source: "hr", Text: "Employees get 25 days of annual leave.", Vector: []float32{1, 0}},
		{ID: "vpn-1", DocID: "vpn", Tenant: "acme", Source: "it", Text: "Connect to the VPN before opening the wiki.", Vector: []float32{0, 1}},
		{ID: "leave-9", DocID: "leave", Tenant: "globex", Source: "hr", Text: "Annual leave is 30 days.", Vector: []float32{1, 0}},
	})
	if err != nil {
		log.Fatal(err)
	}

	hits, err := st.SearchHybrid(ctx, retrieval.Request{
		Scope:  retrieval.Scope{Tenant: "acme"}, // globex's chunk is never seen
		Text:   "how many days of annual leave",
		Vector: []float32{0.9, 0.1},
		K:      5,
	})
	if err != nil {
		log.Fatal(err)
	}
	// leave-1 is first in both legs: 2/(60+1); vpn-1 is second in the dense
	// leg only: 1/(60+2).
	for _, h := range hits {
		fmt.Printf("%s %s %.4f\n", h.Chunk.ID, h.Method, h.Score)
	}
	// Output:
	// leave-1 hybrid 0.0328
	// vpn-1 hybrid 0.0161
}

func ExampleParseURL() {
	cfg, err := qdrant.ParseURL("https://qdrant.example.com:6334/handbook?api_key=secret")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg)
	// Output: qdrant{qdrant.example.com:6334 collection=handbook tls=true dim=0 api_key=REDACTED}
}
