package relevance_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/internal/workload"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/samplekb"
)

// benchHits returns n hits of about 300 characters cut from the sample
// handbook's Markdown and text files, Chinese and English mixed, plus an
// FAQ entry every tenth hit.
func benchHits(tb testing.TB, n int) []retrieval.Hit {
	tb.Helper()
	var pieces []string
	err := fs.WalkDir(samplekb.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".txt")) {
			return err
		}
		b, err := fs.ReadFile(samplekb.FS(), p)
		if err != nil {
			return err
		}
		r := []rune(string(b))
		for i := 0; i+300 <= len(r); i += 300 {
			pieces = append(pieces, string(r[i:i+300]))
		}
		return nil
	})
	if err != nil || len(pieces) == 0 {
		tb.Fatalf("sample text: %d pieces, %v", len(pieces), err)
	}
	hits := make([]retrieval.Hit, n)
	for i := range hits {
		c := retrieval.Chunk{ID: fmt.Sprint(i), Title: "handbook", Text: pieces[i*7%len(pieces)]}
		if i%10 == 9 {
			c = retrieval.Chunk{ID: fmt.Sprint(i), ContentType: retrieval.ContentFAQ, Title: "年假有多少天？", Text: "年假有多少天？",
				Meta: map[string]string{retrieval.MetaQuestion: "年假有多少天？", retrieval.MetaAnswer: "每年 5 天。"}}
		}
		hits[i] = retrieval.Hit{Chunk: c, Method: retrieval.MethodHybrid}
	}
	return hits
}

func benchmarkCalibrate(b *testing.B, n int, query string) {
	hits := benchHits(b, n)
	c := relevance.New(relevance.Config{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Calibrate(ctx, query, hits); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalibrate8ZH(b *testing.B) {
	benchmarkCalibrate(b, 8, "报销超过五千元需要谁审批？")
}
func BenchmarkCalibrate50ZH(b *testing.B) {
	benchmarkCalibrate(b, 50, "报销超过五千元需要谁审批？")
}
func BenchmarkCalibrate8EN(b *testing.B) {
	benchmarkCalibrate(b, 8, "Who approves an expense claim above 5,000 yuan?")
}
func BenchmarkCalibrate50EN(b *testing.B) {
	benchmarkCalibrate(b, 50, "Who approves an expense claim above 5,000 yuan?")
}

// askPassages returns n passages of the sample handbook as ingestion cuts
// them (title the heading path, text the heading path and up to 500
// characters of body, table rows and FAQ entries among them), the
// documents' and FAQ's chunks interleaved in a fixed order.
func askPassages(tb testing.TB, n int) []retrieval.Hit {
	tb.Helper()
	cs, _, err := ingest.LoadFS(context.Background(), samplekb.FS(), ingest.Options{})
	if err != nil || len(cs) < n {
		tb.Fatalf("sample chunks: %d, %v", len(cs), err)
	}
	hits := make([]retrieval.Hit, n)
	for i := range hits {
		hits[i] = retrieval.Hit{Chunk: cs[i*37%len(cs)], Method: retrieval.MethodRerank}
	}
	return hits
}

// benchmarkAsk calibrates the passages of one analytical ask (the
// relevance stage of the analytical route: the reranked pool, 8 passages,
// or the hybrid candidates, 50) and reports, besides wall time, the CPU
// time per ask.
func benchmarkAsk(b *testing.B, n int, query string) {
	hits := askPassages(b, n)
	c := relevance.New(relevance.Config{})
	ctx := context.Background()
	b.ReportAllocs()
	start := workload.CPUTime()
	for b.Loop() {
		if err := c.Calibrate(ctx, query, hits); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(workload.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

const (
	askZH = "差旅报销和招待报销的审批流程有什么区别？"
	askEN = "Compare the approval chains for expense claims under 1,000 yuan and over 5,000 yuan"
)

func BenchmarkAsk8ZH(b *testing.B)  { benchmarkAsk(b, 8, askZH) }
func BenchmarkAsk50ZH(b *testing.B) { benchmarkAsk(b, 50, askZH) }
func BenchmarkAsk8EN(b *testing.B)  { benchmarkAsk(b, 8, askEN) }
func BenchmarkAsk50EN(b *testing.B) { benchmarkAsk(b, 50, askEN) }
