package eval_test

import (
	"context"
	"fmt"
	"os"

	"github.com/adaptrag/adaptrag/retrieval/bm25"
	"github.com/adaptrag/adaptrag/retrieval/eval"
)

func Example() {
	ds, err := eval.LoadBEIR("testdata/tiny")
	if err != nil {
		fmt.Println(err)
		return
	}
	ix := bm25.New(bm25.Params{})
	for i, d := range ds.Corpus {
		ix.Add(uint32(i), d.Title+" "+d.Text)
	}
	search := func(_ context.Context, q eval.Query) ([]string, error) {
		var ids []string
		for _, s := range ix.Search(q.Text, 50, nil) {
			ids = append(ids, ds.Corpus[s.ID].ID)
		}
		return ids, nil
	}
	r, err := eval.Run(context.Background(), ds, "bm25", search)
	if err != nil {
		fmt.Println(err)
		return
	}
	r.P50ms = 0 // latency varies from run to run
	r.WriteText(os.Stdout)
	// Output:
	// mode         queries ndcg@10     r@1     r@3     r@8    r@50  mrr@10   p50_ms
	// bm25               2   1.000   0.750   1.000   1.000   1.000   1.000    0.000
}
