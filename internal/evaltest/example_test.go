package evaltest_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/internal/evaltest"
	"github.com/adaptrag/adaptrag/retrieval/eval"
)

// A measurement ranks every query of a set and scores the rankings with
// retrieval/eval; here on a hand-made set instead of evaltest.Load.
func ExampleBM25() {
	ds := &eval.Dataset{
		Corpus: []eval.Doc{
			{ID: "tea", Title: "Tea", Text: "green tea is brewed at 80 degrees"},
			{ID: "coffee", Title: "Coffee", Text: "espresso is brewed under pressure"},
		},
		Queries: []eval.Query{{ID: "q1", Text: "how is espresso brewed"}},
		Qrels:   map[string]map[string]int{"q1": {"coffee": 1}},
	}
	ref := evaltest.NewBM25(ds)
	ranked := ref.Rank(ds.Queries[0].Text, 10)
	fmt.Println(ranked)
	fmt.Printf("nDCG@10 %.2f\n", eval.NDCG(ranked, ds.Qrels["q1"], 10))
	// Output:
	// [coffee tea]
	// nDCG@10 1.00
}
