package embed_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/embed"
)

// TestMeasureHashing compares the offline embedder (exact cosine search over
// the whole corpus) with the BM25 reference on the BEIR sets. It logs the
// figures, split into the first half of the queries (where the feature
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
			s := loadBEIR(t, name)
			texts := make([]string, len(s.Docs))
			for i, d := range s.Docs {
				texts[i] = d.Title + "\n" + d.Text
			}
			dv, err := e.Embed(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			qtexts := make([]string, len(s.Queries))
			for i, q := range s.Queries {
				qtexts[i] = q.Text
			}
			qv, err := e.Embed(ctx, qtexts)
			if err != nil {
				t.Fatal(err)
			}
			ref := newBM25(s.Docs)
			var dense, sparse [3]metrics // all, first half, second half
			half := len(s.Queries) / 2
			for i, q := range s.Queries {
				var sc []scored
				for j, v := range dv {
					sc = append(sc, scored{j, dot(qv[i], v)})
				}
				dr := ids(s, topK(sc, 10))
				sr := ids(s, ref.search(q.Text, 10))
				part := 1
				if i >= half {
					part = 2
				}
				for _, p := range []int{0, part} {
					dense[p].add(dr, s.Rel[q.ID])
					sparse[p].add(sr, s.Rel[q.ID])
				}
			}
			t.Logf("%-9s queries=%d docs=%d", name, len(s.Queries), len(s.Docs))
			for p, label := range []string{"all", "tune half", "held-out half"} {
				t.Logf("  %-13s hashing nDCG@10 %.3f R@8 %.3f | bm25 nDCG@10 %.3f R@8 %.3f",
					label, dense[p].NDCG(), dense[p].Recall(), sparse[p].NDCG(), sparse[p].Recall())
			}
			if got := dense[0].NDCG(); got < floors[name] {
				t.Errorf("hashing nDCG@10 = %.3f, want >= %.2f", got, floors[name])
			}
		})
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func ids(s *beirSet, sc []scored) []string {
	out := make([]string, len(sc))
	for i, x := range sc {
		out[i] = s.Docs[x.Doc].ID
	}
	return out
}
