package embed_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag/internal/evaltest"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/eval"
)

// TestMeasureHashing compares the offline embedder (exact cosine search over
// the whole corpus) with the project's BM25 index on the BEIR sets. It logs
// the figures, split into the first half of the queries (where the feature
// weights were chosen) and the second half (held out), and asserts only a
// floor that a broken embedder would miss: a random ranking of the faq
// corpora (~30 docs) scores nDCG@10 ~0.2, and of xquad (240 docs) ~0.02.
//
//	go test ./retrieval/embed -run TestMeasureHashing -v
func TestMeasureHashing(t *testing.T) {
	floors := map[string]float64{"faq_en-us": 0.30, "faq_zh-cn": 0.30, "xquad_en": 0.5, "xquad_zh": 0.5}
	e := embed.NewHashing(embed.HashingConfig{})
	ctx := context.Background()
	for _, name := range []string{"faq_en-us", "faq_zh-cn", "xquad_en", "xquad_zh"} {
		t.Run(name, func(t *testing.T) {
			ds := evaltest.Load(t, name)
			dv := evaltest.EmbedCorpus(t, e, ds)
			qtexts := make([]string, len(ds.Queries))
			for i, q := range ds.Queries {
				qtexts[i] = q.Text
			}
			qvs, err := e.Embed(ctx, qtexts)
			if err != nil {
				t.Fatal(err)
			}
			qv := make(map[string][]float32, len(qvs))
			for i, q := range ds.Queries {
				qv[q.ID] = qvs[i]
			}
			dense := func(_ context.Context, q eval.Query) ([]string, error) {
				return evaltest.IDs(ds, evaltest.Nearest(qv[q.ID], dv, 10)), nil
			}
			ref := evaltest.NewBM25(ds)
			sparse := func(_ context.Context, q eval.Query) ([]string, error) {
				return ref.Rank(q.Text, 10), nil
			}
			tune, held := evaltest.Halves(ds)
			t.Logf("%-9s queries=%d docs=%d", name, len(ds.Queries), len(ds.Corpus))
			var all eval.Report
			for i, part := range []*eval.Dataset{ds, tune, held} {
				d, err := eval.Run(ctx, part, "hashing", dense)
				if err != nil {
					t.Fatal(err)
				}
				s, err := eval.Run(ctx, part, "bm25", sparse)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					all = d
				}
				t.Logf("  %-13s hashing nDCG@10 %.3f R@8 %.3f | bm25 nDCG@10 %.3f R@8 %.3f",
					[]string{"all", "tune half", "held-out half"}[i], d.NDCG10, d.Recall8, s.NDCG10, s.Recall8)
			}
			if all.NDCG10 < floors[name] {
				t.Errorf("hashing nDCG@10 = %.3f, want >= %.2f", all.NDCG10, floors[name])
			}
		})
	}
}
