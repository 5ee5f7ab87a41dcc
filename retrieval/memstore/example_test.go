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

// A reader beside a writer: the read-only Store takes no lock, and Refresh
// brings it up to date with what the writer committed since. The writer
// could as well be another process.
func ExampleStore_Refresh() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memstore-refresh")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	scope := retrieval.Scope{Tenant: "acme"}
	v1 := []retrieval.Chunk{{ID: "p1", DocID: "policy", Tenant: "acme", Text: "Travel must be approved.", Vector: []float32{1, 0}}}
	v2 := []retrieval.Chunk{{ID: "p1", DocID: "policy", Tenant: "acme", Text: "Travel over 500 EUR must be approved.", Vector: []float32{1, 0}}}

	w, err := memstore.Open(ctx, memstore.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	if err := w.ReplaceDocument(ctx, scope, "policy", v1); err != nil {
		log.Fatal(err)
	}

	r, err := memstore.Open(ctx, memstore.Options{Dir: dir, ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	show := func() {
		docs, err := r.Documents(ctx, scope)
		if err != nil {
			log.Fatal(err)
		}
		hits, err := r.SearchSparse(ctx, retrieval.Request{Scope: scope, Text: "travel", K: 1})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(docs), "document:", hits[0].Chunk.Text)
	}
	show()

	// The writer replaces the document (one record: readers see the old
	// version or the new one, never a mix).
	if err := w.ReplaceDocument(ctx, scope, "policy", v2); err != nil {
		log.Fatal(err)
	}
	show() // not yet refreshed
	if err := r.Refresh(ctx); err != nil {
		log.Fatal(err)
	}
	show()
	// Output:
	// 1 document: Travel must be approved.
	// 1 document: Travel must be approved.
	// 1 document: Travel over 500 EUR must be approved.
}
