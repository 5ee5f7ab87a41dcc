package relevance_test

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
)

// Hits found by different methods get relevance on one scale, so that one
// minimum relevance drops the unrelated ones whatever found them.
func Example() {
	hits := []retrieval.Hit{
		{Method: retrieval.MethodDense, Score: 0.62, Chunk: retrieval.Chunk{ID: "leave",
			Title: "Leave policy > Annual leave",
			Text:  "Statutory annual leave is 5 days a year with 1 to 10 years of working experience."}},
		{Method: retrieval.MethodRerank, Score: 1.21, Chunk: retrieval.Chunk{ID: "vpn",
			Title: "IT > VPN",
			Text:  "If the VPN client cannot connect, check your internet access and the system clock."}},
		{Method: retrieval.MethodDense, Score: 0.55, Collection: "faq", Chunk: retrieval.Chunk{ID: "faq-036",
			ContentType: retrieval.ContentFAQ, Title: "How many days of annual leave do I get?",
			Meta: map[string]string{retrieval.MetaQuestion: "How many days of annual leave do I get?"}}},
	}
	cal := relevance.New(relevance.Config{})
	if err := cal.Calibrate(context.Background(), "How many days of annual leave do I get?", hits); err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hits {
		keep := h.Relevance >= relevance.DefaultMinRelevance
		fmt.Printf("%-8s %-7s relevance %.2f keep %v\n", h.Chunk.ID, h.Method, h.Relevance, keep)
	}
	// Output:
	// leave    dense   relevance 0.99 keep true
	// vpn      rerank  relevance 0.00 keep false
	// faq-036  dense   relevance 0.99 keep true
}
