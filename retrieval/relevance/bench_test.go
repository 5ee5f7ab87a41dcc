package relevance_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

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
