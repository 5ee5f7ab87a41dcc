package adaptrag_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag"
)

// BenchmarkAsk is a whole offline run per route class on the sample
// handbook: classifier, retrieval, rerank, relevance and the extractive
// answer (go test -run=^$ -bench=Ask -benchmem .).
func BenchmarkAsk(b *testing.B) {
	f := newFixture(b)
	p := f.pipeline(b)
	for _, q := range []struct{ name, q string }{
		{"Chitchat", "how is your day going"},
		{"Factual", "退货要在几天内发起？"},
		{"Analytical", "对比一下差旅报销和招待报销的流程差异"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Ask(context.Background(), adaptrag.Request{Question: q.q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
