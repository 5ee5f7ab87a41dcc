package adaptrag_test

import (
	"context"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/router"
)

// denseOnly is a backend with dense search and nothing else.
type denseOnly struct{ s retrieval.Searcher }

func (d denseOnly) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	return d.s.SearchDense(ctx, r)
}
func (d denseOnly) Dim() int { return d.s.Dim() }

// denseSparse has dense and sparse search but no hybrid of its own.
type denseSparse struct{ s fullSearcher }

func (d denseSparse) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	return d.s.SearchDense(ctx, r)
}
func (d denseSparse) SearchSparse(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	return d.s.SearchSparse(ctx, r)
}
func (d denseSparse) Dim() int { return d.s.Dim() }

// A backend with dense search only needs no BM25 stub: the analytical route
// (hybrid, 50 candidates reranked to 8) runs on its dense candidates.
func TestDenseOnlyBackendTakesTheAnalyticalRoute(t *testing.T) {
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	var _ retrieval.Searcher = denseOnly{} // compiles: dense search is all a Searcher needs
	p, err := adaptrag.New(context.Background(), adaptrag.Deps{Docs: denseOnly{k.Docs}, Embedder: embed.NewHashing(embed.HashingConfig{})}, adaptrag.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Ask(context.Background(), adaptrag.Request{Question: "对比一下差旅报销和招待报销的流程差异"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Route.QueryType != router.Analytical || !slices.Contains(res.Path, adaptrag.NodeHybrid) || !slices.Contains(res.Path, adaptrag.NodeRerank) {
		t.Fatalf("route %s, path %v", res.Route.QueryType, res.Path)
	}
	if len(res.Docs) == 0 || res.Answer == "" {
		t.Fatalf("%d passages, answer %q", len(res.Docs), res.Answer)
	}
}

// Fusion in the pipeline, for a backend with dense and sparse search but
// no hybrid, gives the same hits in the same order as the store's own
// hybrid search.
func TestPipelineFusionMatchesStoreHybrid(t *testing.T) {
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	emb := embed.NewHashing(embed.HashingConfig{})
	store := k.Docs.(fullSearcher)
	for _, q := range []string{"对比一下差旅报销和招待报销的流程差异", "退货要在几天内发起？", "电子发票怎么申请", "zeppelin"} {
		v, err := emb.Embed(context.Background(), []string{q})
		if err != nil {
			t.Fatal(err)
		}
		req := retrieval.Request{Text: q, Vector: v[0], K: 8, Candidates: plan.DefaultAnalyticalCandidates, DenseWeight: retrieval.DenseWeightOf(emb)}
		want, err := store.SearchHybrid(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := retrieval.SearchHybrid(context.Background(), denseSparse{store}, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits fused in the pipeline, %d from the store", q, len(got), len(want))
		}
		for i := range got {
			if got[i].Chunk.ID != want[i].Chunk.ID || got[i].Method != want[i].Method {
				t.Fatalf("%s: hit %d is %s (%s), the store's %s (%s)", q, i, got[i].Chunk.ID, got[i].Method, want[i].Chunk.ID, want[i].Method)
			}
		}
	}
}
