// Command fit fits the coefficients of package relevance and reports their
// calibration on the held-out half of each evaluation set:
//
//	go run ./retrieval/relevance/internal/fit -data /work/shared/data
//	go run ./retrieval/relevance/internal/fit -data /work/shared/data -write retrieval/relevance/model.go
//
// -data is the evaluation data directory (the one holding retrieval/, or
// retrieval/ itself); the
// fit is deterministic, so -write reproduces the shipped file exactly.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/fitting"
)

func main() { os.Exit(main1()) }

func main1() int {
	data := flag.String("data", "../shared/data", "evaluation data directory (holds retrieval/, or is it)")
	write := flag.String("write", "", "write the model source to this file")
	flag.Parse()
	ctx := context.Background()
	cs, err := fitting.Collect(ctx, *data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fit: %v\n", err)
		return 1
	}
	m := fitting.Fit(cs)
	if err := fitting.Report(ctx, os.Stdout, m, cs); err != nil {
		fmt.Fprintf(os.Stderr, "fit: %v\n", err)
		return 1
	}
	if *write != "" {
		if err := os.WriteFile(*write, fitting.Source(m), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "fit: %v\n", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "fit: wrote %s\n", *write)
	}
	return 0
}
