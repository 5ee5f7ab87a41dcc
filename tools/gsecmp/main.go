// Command gsecmp compares BM25 nDCG@10 with the default CJK unigram+bigram
// analyzer versus the gse Chinese word segmenter (embedded dictionary). It
// is its own module so that gse never enters the library's go.mod:
//
//	cd tools/gsecmp && go run . [DATA]   (DATA defaults to ../../../shared/data)
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/retrieval/bm25"
	"github.com/adaptrag/adaptrag/retrieval/eval"
	"github.com/go-ego/gse"
)

func main() {
	t0 := time.Now()
	seg, err := gse.NewEmbed("zh")
	if err != nil {
		panic(err)
	}
	fmt.Printf("gse dictionary loaded in %v\n", time.Since(t0))
	var mu sync.Mutex
	post := analysis.Pipeline{Filters: []analysis.Filter{analysis.Width{}, analysis.Lower{}}}
	words := func(cut func(string) []string) analysis.Analyzer {
		return analysis.Func(func(s string) []string {
			mu.Lock()
			ws := cut(s)
			mu.Unlock()
			var out []string
			for _, w := range ws {
				out = append(out, post.Tokens(w)...)
			}
			return out
		})
	}
	uni := analysis.Pipeline{Filters: []analysis.Filter{analysis.Width{}, analysis.Lower{}, unigrams{}}}
	variants := []struct {
		name string
		an   analysis.Analyzer
	}{
		{"unigram+bigram (default)", analysis.Default()},
		{"gse Cut (hmm)", words(func(s string) []string { return seg.Cut(s, true) })},
		{"gse CutSearch (hmm)", words(func(s string) []string { return seg.CutSearch(s, true) })},
		{"gse CutSearch + unigrams", analysis.Func(func(s string) []string {
			return append(words(func(s string) []string { return seg.CutSearch(s, true) }).Tokens(s), uni.Tokens(s)...)
		})},
	}
	for _, set := range []string{"faq_zh-cn", "xquad_zh"} {
		ds, err := eval.LoadBEIR(filepath.Join(dataDir(), "retrieval", set))
		if err != nil {
			panic(err)
		}
		for _, v := range variants {
			for _, distinct := range []bool{false, true} {
				ix := bm25.New(bm25.Params{Analyzer: v.an, CountRepeatedQueryTerms: !distinct})
				for i, d := range ds.Corpus {
					ix.Add(uint32(i), d.Title+" "+d.Text)
				}
				r, err := eval.Run(context.Background(), ds, v.name, func(_ context.Context, q eval.Query) ([]string, error) {
					var ids []string
					for _, s := range ix.Search(q.Text, 50, nil) {
						ids = append(ids, ds.Corpus[s.ID].ID)
					}
					return ids, nil
				})
				if err != nil {
					panic(err)
				}
				fmt.Printf("%-10s %-28s distinct=%-5v ndcg@10 %.4f r@1 %.4f r@8 %.4f mrr@10 %.4f p50 %.3fms\n", set, v.name, distinct, r.NDCG10, r.Recall1, r.Recall8, r.MRR10, r.P50ms)
			}
		}
	}
	_ = os.Stdout
}

// unigrams keeps CJK runs as single characters only.
type unigrams struct{}

func (unigrams) Filter(ts []analysis.Token) []analysis.Token {
	var out []analysis.Token
	for _, t := range ts {
		if t.Kind != analysis.CJK {
			continue
		}
		for i, r := range t.Term {
			out = append(out, analysis.Token{Term: string(r), Start: t.Start + i, End: t.Start + i + len(string(r)), Kind: analysis.CJK})
		}
	}
	return out
}

// dataDir is the evaluation data: the first argument, else ../shared/data
// beside the repository.
func dataDir() string {
	if len(os.Args) > 1 {
		return os.Args[1]
	}
	return filepath.Join("..", "..", "..", "shared", "data")
}
