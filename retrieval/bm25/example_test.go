package bm25_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval/bm25"
)

func Example() {
	ix := bm25.New(bm25.Params{}) // k1 1.2, b 0.75, the default analyzer
	ix.Add(1, "How do I reset my password?")
	ix.Add(2, "Password policy: at least 12 characters")
	ix.Add(3, "如何重置密码")
	ix.Add(4, "Opening hours of the help desk")

	for _, s := range ix.Search("reset password", 10, nil) {
		fmt.Println(s.ID) // best first; s.Score is the BM25 score
	}
	// Only documents the caller may see compete for the k places.
	for _, s := range ix.Search("密码 password", 10, func(id uint32) bool { return id != 1 }) {
		fmt.Println(s.ID)
	}
	// Output:
	// 1
	// 2
	// 3
	// 2
}
