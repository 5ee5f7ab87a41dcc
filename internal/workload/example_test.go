package workload_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// The first query and the fingerprint of the N=10000 lexical workload are
// the check values published with the peer harness.
func ExampleNewLexical() {
	l := workload.NewLexical(10_000)
	fmt.Println(l.Queries[0])
	fmt.Printf("%#016x\n", l.Fingerprint())
	// Output:
	// t2388 t31 t959 t281
	// 0xfbe884a192af0d42
}

func ExampleRecall() {
	type hit struct{ ID uint32 }
	got := [][]hit{{{1}, {2}, {7}, {8}}}
	exact := [][]hit{{{1}, {2}, {3}, {4}}}
	fmt.Println(workload.Recall(got, exact, func(h hit) uint32 { return h.ID }))
	// Output: 0.5
}
