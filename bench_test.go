package adaptrag_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag"
)

// BenchmarkAsk is a whole offline run per route class on the sample
// handbook: classifier, retrieval, rerank, relevance and the extractive
// answer (go test -run=^$ -bench=Ask -benchmem .). Besides time/op, which a
// busy machine inflates, it reports cpu-ms/op: the CPU time the process
// spent per ask (collector included), where the system can tell it.
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
			start, ok := processCPU()
			n := 0
			for b.Loop() {
				if _, err := p.Ask(context.Background(), adaptrag.Request{Question: q.q}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if end, ok2 := processCPU(); ok && ok2 && n > 0 {
				b.ReportMetric(float64((end-start).Microseconds())/1000/float64(n), "cpu-ms/op")
			}
		})
	}
}
