package relevance_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/adaptrag/adaptrag/internal/evaltest"
	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/fitting"
)

var (
	collectOnce sync.Once
	collected   []fitting.Candidate
	collectErr  error
)

// candidates retrieves and labels the evaluation sets once per test
// binary (about ten seconds). It skips when the data is absent.
func candidates(t *testing.T) []fitting.Candidate {
	t.Helper()
	dir := evaltest.DataDir(t)
	collectOnce.Do(func() { collected, collectErr = fitting.Collect(context.Background(), dir) })
	if collectErr != nil {
		t.Fatal(collectErr)
	}
	return collected
}

// TestShippedModelReproduces refits the model on the evaluation data and
// checks that the result is the shipped model.go, byte for byte.
func TestShippedModelReproduces(t *testing.T) {
	if testing.Short() {
		t.Skip("refits the model (about ten seconds)")
	}
	cs := candidates(t)
	want, err := os.ReadFile("model.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := fitting.Source(fitting.Fit(cs)); !bytes.Equal(got, want) {
		t.Errorf("model.go is not what the fit gives; rerun\n\tgo run ./retrieval/relevance/internal/fit -data DATA -write retrieval/relevance/model.go\ngot:\n%s", got)
	}
}

// TestCalibrationHeldOut checks the shipped model on the held-out half of
// every evaluation set, for every retrieval method: its expected
// calibration error stays small and its Brier score beats always
// answering the base rate. -v prints the full report.
//
//	go test ./retrieval/relevance -run TestCalibrationHeldOut -v
func TestCalibrationHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("retrieves the evaluation sets (about ten seconds)")
	}
	cs := candidates(t)
	ctx := context.Background()
	m := relevance.DefaultModel()
	var b strings.Builder
	if err := fitting.Report(ctx, &b, m, cs); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		t.Log(line)
	}
	p, err := fitting.Calibrate(ctx, m, cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fitting.Sets {
		for _, meth := range fitting.Methods {
			var ps []float64
			var ys []bool
			for i, c := range cs {
				if c.Held && c.Set == s.Name && c.Method == meth {
					ps = append(ps, p[i])
					ys = append(ys, c.Relevant)
				}
			}
			c := fitting.Measure(ps, ys)
			if c.ECE > 0.06 || c.Brier >= c.BrierBase {
				t.Errorf("%s %s held out: ECE %.3f (want <= 0.06), Brier %.3f (base rate %.3f)", s.Name, meth, c.ECE, c.Brier, c.BrierBase)
			}
		}
	}
}
