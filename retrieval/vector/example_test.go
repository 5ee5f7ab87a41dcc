package vector_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval/vector"
)

func ExampleIndex_Search() {
	ix := vector.New(3, vector.Options{})
	_ = ix.Add(1, []float32{1, 0, 0})
	_ = ix.Add(2, []float32{0, 1, 0})
	_ = ix.Add(3, []float32{1, 1, 0}) // normalized by Add

	for _, h := range ix.Search([]float32{2, 0, 0}, 2, nil) {
		fmt.Printf("id %d cosine %.3f\n", h.ID, h.Score)
	}
	// Only odd ids.
	odd := func(id uint32) bool { return id%2 == 1 }
	fmt.Println(ix.Search([]float32{0, 1, 0}, 1, odd)[0].ID)
	// Output:
	// id 1 cosine 1.000
	// id 3 cosine 0.707
	// 3
}
