package fitting

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval/relevance"
	"github.com/adaptrag/adaptrag/retrieval/relevance/internal/feature"
)

// Report writes the model and its calibration on the held-out half: per
// data set and method, then a reliability table by decile per method over
// all sets.
func Report(ctx context.Context, w io.Writer, m relevance.Model, cs []Candidate) error {
	p, err := Calibrate(ctx, m, cs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "features: %s\n", strings.Join(feature.Names[:], " "))
	fmt.Fprintf(w, "doc model: intercept %+.4f weights %v\n", m.Doc.Intercept, m.Doc.Weights)
	fmt.Fprintf(w, "faq model: intercept %+.4f weights %v\n\n", m.FAQ.Intercept, m.FAQ.Weights)
	sel := func(keep func(Candidate) bool) ([]float64, []bool) {
		var ps []float64
		var ys []bool
		for i, c := range cs {
			if c.Held && keep(c) {
				ps = append(ps, p[i])
				ys = append(ys, c.Relevant)
			}
		}
		return ps, ys
	}
	fmt.Fprintln(w, "Held-out half (second half of each set's queries):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| set | method | hits | relevant | mean relevance | ECE | Brier | Brier (base rate) | AUC |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	row := func(set, method string, c Calib) {
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
			set, method, c.N, c.BaseRate, c.Mean, c.ECE, c.Brier, c.BrierBase, c.AUC)
	}
	for _, s := range Sets {
		for _, meth := range Methods {
			row(s.Name, meth, Measure(sel(func(c Candidate) bool { return c.Set == s.Name && c.Method == meth })))
		}
	}
	for _, meth := range Methods {
		row("all", meth, Measure(sel(func(c Candidate) bool { return c.Method == meth })))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Reliability by decile of relevance, held-out half, all sets (hits, observed share relevant):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| method |")
	for b := range 10 {
		fmt.Fprintf(w, " %.1f-%.1f |", float64(b)/10, float64(b+1)/10)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "|---|"+strings.Repeat("---|", 10))
	for _, meth := range Methods {
		c := Measure(sel(func(c Candidate) bool { return c.Method == meth }))
		fmt.Fprintf(w, "| %s |", meth)
		for _, b := range c.Bins {
			if b.N == 0 {
				fmt.Fprint(w, " - |")
				continue
			}
			fmt.Fprintf(w, " %d: %.2f |", b.N, b.Observed)
		}
		fmt.Fprintln(w)
	}
	return nil
}
