package retrievaltest_test

import (
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval/retrievaltest"
)

// A backend's test runs the whole suite with a constructor of fresh stores:
//
//	func TestConformance(t *testing.T) {
//		retrievaltest.Run(t, func(t *testing.T, dim int) retrieval.Store {
//			s, err := mystore.Open(context.Background(), mystore.Options{Dim: dim})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s // Run closes it
//		})
//	}
//
// The fixtures are small enough to read:
func ExampleCorpus() {
	for _, c := range retrievaltest.Corpus() {
		fmt.Println(c.ID, c.Vector, c.Text)
	}
	// Output:
	// c0 [1 0 0 0 0 0 0 0] the quick brown fox jumps
	// c1 [0 1 0 0 0 0 0 0] quarterly revenue report company finance
	// c2 [0 0 1 0 0 0 0 0] kubernetes cluster upgrade procedure
	// c3 [0 0 0 1 0 0 0 0] holiday leave policy company employees
	// c4 [0 0 0 0 1 0 0 0] password reset instructions company laptops
}
