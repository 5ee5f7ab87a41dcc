package fitting

import (
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/feature"
)

func TestMeasure(t *testing.T) {
	p := []float64{0.05, 0.05, 0.95, 0.95}
	y := []bool{false, false, true, true}
	c := Measure(p, y)
	if c.N != 4 || c.BaseRate != 0.5 || math.Abs(c.ECE-0.05) > 1e-12 || math.Abs(c.Brier-0.0025) > 1e-12 || c.AUC != 1 {
		t.Errorf("%+v", c)
	}
	if c.Bins[0].N != 2 || c.Bins[9].N != 2 || c.Bins[9].Observed != 1 {
		t.Errorf("bins %+v", c.Bins)
	}
	// Ties count half; a constant prediction has AUC 0.5.
	if a := auc([]float64{0.3, 0.3, 0.3}, []bool{true, false, false}); a != 0.5 {
		t.Errorf("auc of ties %v", a)
	}
	if !math.IsNaN(auc([]float64{0.1}, []bool{true})) {
		t.Error("auc without negatives should be NaN")
	}
}

// TestFitRecoversModel fits synthetic candidates drawn from a known
// logistic model and checks that the coefficients come back.
func TestFitRecoversModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cs []Candidate
	for i := range 20000 {
		var x feature.Vector
		x[feature.Cov] = rng.Float64()
		p := 1 / (1 + math.Exp(-(-3 + 6*x[feature.Cov])))
		for _, m := range []string{"dense@3", "hybrid@50"} {
			cs = append(cs, Candidate{Set: "s", Method: m, Query: string(rune(i)), X: x, Relevant: rng.Float64() < p})
		}
	}
	m := Fit(cs)
	// Each group weighs GroupWeight in all, so the ridge shrinks a little.
	if math.Abs(m.Doc.Intercept+3) > 0.3 || math.Abs(m.Doc.Weights[feature.Cov]-6) > 0.5 {
		t.Errorf("fitted %+v, want intercept -3, cov 6", m.Doc)
	}
	for i, w := range m.Doc.Weights {
		if i != feature.Cov && w != 0 {
			t.Errorf("weight %s = %v for a constant-zero feature", feature.Names[i], w)
		}
	}
	if again := Fit(cs); again.Doc.Intercept != m.Doc.Intercept || again.Doc.Weights[0] != m.Doc.Weights[0] {
		t.Error("the fit is not deterministic")
	}
}

func TestSourceIsGo(t *testing.T) {
	src := Source(relevance.DefaultModel())
	if _, err := parser.ParseFile(token.NewFileSet(), "model.go", src, 0); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if !strings.Contains(string(src), "DO NOT EDIT") {
		t.Error("no generated-code header")
	}
}
