package rerank_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

func mkHits(texts ...string) []retrieval.Hit {
	hs := make([]retrieval.Hit, len(texts))
	for i, t := range texts {
		hs[i] = retrieval.Hit{
			Chunk:  retrieval.Chunk{ID: fmt.Sprintf("c%d", i), Text: t},
			Score:  1 / float64(61+i),
			Method: "hybrid",
		}
	}
	return hs
}

func ids(hs []retrieval.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Chunk.ID
	}
	return out
}

func TestLexicalCoverageLiftsCompleteMatch(t *testing.T) {
	hits := mkHits(
		"Invoices are sent by email.",
		"An electronic invoice takes two business days to arrive.",
		"Our office is closed on Sundays.",
	)
	out, err := rerank.NewLexical(rerank.LexicalConfig{}).Rerank(context.Background(), "how long does an electronic invoice take", hits, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(out); !slices.Equal(got, []string{"c1", "c0"}) {
		t.Errorf("order = %v, want [c1 c0]", got)
	}
	for _, h := range out {
		if h.Method != rerank.MethodRerank {
			t.Errorf("Method = %q, want %q", h.Method, rerank.MethodRerank)
		}
	}
	if out[0].Score <= out[1].Score {
		t.Errorf("scores not decreasing: %v", []float64{out[0].Score, out[1].Score})
	}
}

func TestLexicalTitleBonus(t *testing.T) {
	hits := mkHits("It depends on the plan.", "It depends on the plan.")
	hits[1].Chunk.Title = "Refund policy"
	out, _ := rerank.NewLexical(rerank.LexicalConfig{}).Rerank(context.Background(), "refund policy", hits, 0)
	if out[0].Chunk.ID != "c1" {
		t.Errorf("the hit whose title matches should lead: %v", ids(out))
	}
}

func TestLexicalProximity(t *testing.T) {
	hits := mkHits(
		"reset the router first; much later, after many unrelated steps and a long wait, check the password",
		"password reset takes a minute",
	)
	w := rerank.Weights{Proximity: 1, RankK: 10} // proximity alone
	out, _ := rerank.NewLexical(rerank.LexicalConfig{Weights: w}).Rerank(context.Background(), "password reset", hits, 0)
	if out[0].Chunk.ID != "c1" {
		t.Errorf("adjacent terms should win on proximity alone: %v", ids(out))
	}
	if out[0].Score != 1 {
		t.Errorf("adjacent pair proximity = %v, want 1", out[0].Score)
	}
}

func TestLexicalKeepsOrderWithoutEvidence(t *testing.T) {
	hits := mkHits("alpha", "beta", "gamma", "delta")
	out, _ := rerank.NewLexical(rerank.LexicalConfig{}).Rerank(context.Background(), "zeta", hits, 0)
	if got := ids(out); !slices.Equal(got, []string{"c0", "c1", "c2", "c3"}) {
		t.Errorf("no query term anywhere: order = %v, want the incoming order", got)
	}
}

func TestLexicalChinese(t *testing.T) {
	hits := mkHits("营业时间为周一至周五。", "电子发票一般两天内开具。")
	out, _ := rerank.NewLexical(rerank.LexicalConfig{}).Rerank(context.Background(), "电子发票要多久", hits, 1)
	if len(out) != 1 || out[0].Chunk.ID != "c1" {
		t.Errorf("got %v, want [c1]", ids(out))
	}
}

func TestLexicalEdgeCases(t *testing.T) {
	l := rerank.NewLexical(rerank.LexicalConfig{})
	if out, err := l.Rerank(context.Background(), "q", nil, 5); out != nil || err != nil {
		t.Errorf("no hits: %v, %v; want nil, nil", out, err)
	}
	hits := mkHits("a b", "b c", "c d")
	orig := slices.Clone(hits)
	out, err := l.Rerank(context.Background(), "c d", hits, 10)
	if err != nil || len(out) != 3 {
		t.Fatalf("topN above len: %d hits, %v", len(out), err)
	}
	if !sameHits(hits, orig) {
		t.Error("Rerank modified its input")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Rerank(ctx, "c", hits, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func ExampleLexical() {
	hits := []retrieval.Hit{
		{Chunk: retrieval.Chunk{ID: "billing-1", Title: "Billing", Text: "Invoices are emailed monthly."}, Method: "hybrid"},
		{Chunk: retrieval.Chunk{ID: "einvoice-3", Title: "E-invoices", Text: "An e-invoice is issued within two business days."}, Method: "hybrid"},
		{Chunk: retrieval.Chunk{ID: "hours-1", Title: "Opening hours", Text: "We are open Monday to Friday."}, Method: "hybrid"},
	}
	r := rerank.NewLexical(rerank.LexicalConfig{})
	out, err := r.Rerank(context.Background(), "how long does an e-invoice take to be issued", hits, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range out {
		fmt.Println(h.Chunk.ID, h.Method)
	}
	// Output:
	// einvoice-3 rerank
	// billing-1 rerank
}

// BenchmarkLexical50 reranks 50 paragraph-sized candidates, the analytical
// branch's load: Cold analyses every candidate (no cache), Warm finds them
// all in the reranker's cache, as a knowledge base asked about again does.
func BenchmarkLexical50(b *testing.B) {
	para := "The quarterly report covers invoices, refunds and the delivery times of electronic invoices, " +
		"which usually arrive within two business days unless the tax office delays them. 电子发票一般两天内开具。"
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s Section %d.", para, i)
	}
	hits := mkHits(texts...)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		cache int
	}{{"Cold", -1}, {"Warm", 0}} {
		b.Run(c.name, func(b *testing.B) {
			l := rerank.NewLexical(rerank.LexicalConfig{CacheChunks: c.cache})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Rerank(ctx, "how long does an electronic invoice take", hits, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
