package rerank_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

// rerankRun holds, per query, the candidates to rerank: the BM25 top-50,
// and the hybrid top-50 (weighted RRF of the BM25 and offline-dense
// top-50s, the dense leg weighted as the store weighs it), which is what the
// pipeline's analytical branch hands the reranker.
type rerankRun struct {
	set    *beirSet
	cands  [][]retrieval.Hit
	hybrid [][]retrieval.Hit
}

func bm25Candidates(t testing.TB, name string) *rerankRun {
	s := loadBEIR(t, name)
	ref := newBM25(s.Docs)
	e := embed.NewHashing(embed.HashingConfig{})
	ctx := context.Background()
	texts := make([]string, len(s.Docs))
	for i, d := range s.Docs {
		texts[i] = d.Title + "\n" + d.Text
	}
	dv, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	hit := func(i int, score float64, method string) retrieval.Hit {
		d := s.Docs[i]
		return retrieval.Hit{
			Chunk:  retrieval.Chunk{ID: d.ID, DocID: d.ID, Title: d.Title, Text: d.Text},
			Score:  score,
			Method: method,
		}
	}
	run := &rerankRun{set: s}
	for _, q := range s.Queries {
		var sparse, dense []retrieval.Hit
		for _, sc := range ref.search(q.Text, 50) {
			sparse = append(sparse, hit(sc.Doc, sc.Score, "bm25"))
		}
		qv, err := e.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		var sc []scored
		for j, v := range dv {
			var dot float64
			for k := range v {
				dot += float64(v[k]) * float64(qv[0][k])
			}
			sc = append(sc, scored{j, dot})
		}
		for _, x := range topK(sc, 50) {
			dense = append(dense, hit(x.Doc, x.Score, "dense"))
		}
		run.cands = append(run.cands, sparse)
		fused := retrieval.FuseWeightedRRF(0, []float64{retrieval.DenseWeightOf(e), 1}, dense, sparse)
		run.hybrid = append(run.hybrid, fused[:min(50, len(fused))])
	}
	return run
}

// eval returns nDCG@10 before and after reranking over queries [lo, hi).
func (r *rerankRun) eval(t testing.TB, rr retrieval.Reranker, lo, hi int) (before, after metrics) {
	return r.evalOn(t, r.cands, rr, lo, hi)
}

func (r *rerankRun) evalOn(t testing.TB, cands [][]retrieval.Hit, rr retrieval.Reranker, lo, hi int) (before, after metrics) {
	ctx := context.Background()
	for i := lo; i < hi; i++ {
		q := r.set.Queries[i]
		hits := cands[i]
		before.add(hitIDs(hits), r.set.Rel[q.ID])
		out, err := rr.Rerank(ctx, q.Text, hits, 10)
		if err != nil {
			t.Fatal(err)
		}
		after.add(hitIDs(out), r.set.Rel[q.ID])
	}
	return before, after
}

func hitIDs(hs []retrieval.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Chunk.ID
	}
	return out
}

// TestMeasureLexical reranks, for every query, the BM25 top-50 and the
// hybrid top-50 (weighted RRF of BM25 and the offline Hashing embedder) with the
// default Lexical reranker, and logs nDCG@10 before and after. The weights
// were picked on the first half of each set's queries (BM25 input only);
// the second halves are held out and the hybrid input was never tuned on.
// It asserts that, on the held-out halves, the reranker does not lower the
// mean nDCG@10 of either input.
//
//	go test ./retrieval/rerank -run TestMeasureLexical -v
//
// ADAPTRAG_RERANK_GRID=1 also reruns the weight grid search (minutes).
func TestMeasureLexical(t *testing.T) {
	names := []string{"faq_en-us", "faq_zh-cn", "xquad_en", "xquad_zh"}
	runs := map[string]*rerankRun{}
	for _, n := range names {
		runs[n] = bm25Candidates(t, n)
	}
	if os.Getenv("ADAPTRAG_RERANK_GRID") != "" {
		gridSearch(t, runs["faq_en-us"], runs["faq_zh-cn"], runs["xquad_en"], runs["xquad_zh"])
	}
	// Tokens are memoized: the figures are those of the default reranker,
	// computed without re-analysing each paragraph for every query.
	lex := rerank.NewLexical(rerank.LexicalConfig{Analyzer: memoAnalyzer()})
	var sumBefore, sumAfter, hybBefore, hybAfter float64
	for _, n := range names {
		r := runs[n]
		half := len(r.set.Queries) / 2
		b1, a1 := r.eval(t, lex, 0, half)
		b2, a2 := r.eval(t, lex, half, len(r.set.Queries))
		t.Logf("%-9s nDCG@10 bm25 -> lexical: tune half %.3f -> %.3f | held-out half %.3f -> %.3f (R@8 %.3f -> %.3f)",
			n, b1.NDCG(), a1.NDCG(), b2.NDCG(), a2.NDCG(), b2.Recall(), a2.Recall())
		sumBefore += b2.NDCG()
		sumAfter += a2.NDCG()
		hb, ha := r.evalOn(t, r.hybrid, lex, half, len(r.set.Queries))
		t.Logf("%-9s   hybrid(bm25+hashing) input, held-out half: %.3f -> %.3f", n, hb.NDCG(), ha.NDCG())
		hybBefore += hb.NDCG()
		hybAfter += ha.NDCG()
	}
	t.Logf("held-out mean nDCG@10 on hybrid input: fused %.4f, lexical rerank %.4f", hybBefore/4, hybAfter/4)
	if hybAfter < hybBefore {
		t.Errorf("lexical rerank lowers the held-out mean nDCG@10 of hybrid input: %.4f < %.4f", hybAfter/4, hybBefore/4)
	}
	t.Logf("held-out mean nDCG@10: bm25 %.4f, lexical rerank %.4f", sumBefore/4, sumAfter/4)
	if sumAfter < sumBefore {
		t.Errorf("lexical rerank lowers the held-out mean nDCG@10: %.4f < %.4f", sumAfter/4, sumBefore/4)
	}
}

// gridSearch picks weights on the first half of every set's queries (the
// mean nDCG@10 gain over the four halves). Tokens are memoized: only the
// weights change between configurations.
func gridSearch(t *testing.T, runs ...*rerankRun) {
	an := memoAnalyzer()
	type res struct {
		w    rerank.Weights
		gain float64
	}
	var all []res
	for _, k := range []float64{3, 10, 30, 100} {
		for _, c := range []float64{0, 0.1, 0.3, 1, 3} {
			for _, p := range []float64{0, 0.1, 0.3} {
				for _, ti := range []float64{0, 0.1, 0.3, 1, 3} {
					w := rerank.Weights{Rank: 1, Coverage: c, Proximity: p, Title: ti, RankK: k}
					if w == (rerank.Weights{Rank: 1, RankK: k}) {
						continue // the identity ordering
					}
					lex := rerank.NewLexical(rerank.LexicalConfig{Weights: w, Analyzer: an})
					var gain float64
					for _, r := range runs {
						b, a := r.eval(t, lex, 0, len(r.set.Queries)/2)
						gain += a.NDCG() - b.NDCG()
					}
					all = append(all, res{w, gain / float64(len(runs))})
				}
			}
		}
	}
	slices.SortFunc(all, func(a, b res) int { return cmp.Compare(b.gain, a.gain) })
	for _, r := range all[:5] {
		t.Logf("grid: %+v mean gain on tune halves %+.4f", r.w, r.gain)
	}
}

// memoAnalyzer is analysis.Default with a cache, for single-goroutine
// measurement loops that analyse the same paragraphs over and over.
func memoAnalyzer() analysis.Analyzer {
	memo := map[string][]string{}
	base := analysis.Default()
	return analysis.Func(func(s string) []string {
		if ts, ok := memo[s]; ok {
			return ts
		}
		ts := base.Tokens(s)
		memo[s] = ts
		return ts
	})
}
