package router

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"time"
)

// Labeled is one evaluation query with its gold type.
type Labeled struct {
	Text  string `json:"text"`
	Label string `json:"label"`
}

// ClassScore is precision, recall and F1 of one class.
type ClassScore struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Support   int     `json:"support"`
}

// Report is the outcome of Evaluate.
type Report struct {
	N        int     `json:"n"`
	Accuracy float64 `json:"accuracy"`
	// MacroF1 averages F1 over the classes present in the gold labels (a
	// Chinese set without analytical gold items is scored on two classes;
	// wrong analytical predictions still lower the other classes' recall).
	MacroF1   float64                   `json:"macro_f1"`
	PerClass  map[string]ClassScore     `json:"per_class"`
	Confusion map[string]map[string]int `json:"confusion"` // gold -> predicted -> count
	// SubstantiveToChitchat is the share of factual and analytical items
	// predicted chitchat: the silent failure that skips retrieval.
	SubstantiveToChitchat float64 `json:"substantive_to_chitchat"`
	// P50US is the median classification latency in microseconds.
	P50US float64 `json:"p50_us"`
	// TokensPerQuery is the mean LLM tokens (input + output) per query.
	TokensPerQuery float64 `json:"tokens_per_query"`
	// Errors counts items whose classification failed; they are scored as
	// the fallback route (analytical).
	Errors int `json:"errors"`
}

// Evaluate classifies items one by one and scores the predictions. A failed
// classification counts as predicted "analytical", what the fallback policy
// would route. It stops early, returning what it has, if ctx is done.
func Evaluate(ctx context.Context, c Classifier, items []Labeled) Report {
	rep := Report{PerClass: map[string]ClassScore{}, Confusion: map[string]map[string]int{}}
	lat := make([]time.Duration, 0, len(items))
	tokens := 0
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		start := time.Now()
		r, err := classifyWithUsage(ctx, c, it.Text)
		lat = append(lat, time.Since(start))
		tokens += r.Usage.InputTokens + r.Usage.OutputTokens
		pred := r.Profile.QueryType
		if err != nil {
			rep.Errors++
			pred = Analytical
		}
		if rep.Confusion[it.Label] == nil {
			rep.Confusion[it.Label] = map[string]int{}
		}
		rep.Confusion[it.Label][string(pred)]++
		rep.N++
	}
	score(&rep)
	if rep.N > 0 {
		slices.Sort(lat)
		rep.P50US = float64(lat[(len(lat)-1)/2].Nanoseconds()) / 1e3
		rep.TokensPerQuery = float64(tokens) / float64(rep.N)
	}
	return rep
}

// score fills the metrics from the confusion matrix.
func score(rep *Report) {
	if rep.N == 0 {
		return
	}
	labels := map[string]bool{}
	predicted := map[string]int{}
	correct, sub, subChit := 0, 0, 0
	for gold, row := range rep.Confusion {
		labels[gold] = true
		for pred, n := range row {
			predicted[pred] += n
			if pred == gold {
				correct += n
			}
			if gold != string(Chitchat) {
				sub += n
				if pred == string(Chitchat) {
					subChit += n
				}
			}
		}
	}
	rep.Accuracy = float64(correct) / float64(rep.N)
	if sub > 0 {
		rep.SubstantiveToChitchat = float64(subChit) / float64(sub)
	}
	f1sum := 0.0
	for gold, row := range rep.Confusion {
		support := 0
		for _, n := range row {
			support += n
		}
		tp := row[gold]
		cs := ClassScore{Support: support}
		if predicted[gold] > 0 {
			cs.Precision = float64(tp) / float64(predicted[gold])
		}
		cs.Recall = float64(tp) / float64(support)
		if cs.Precision+cs.Recall > 0 {
			cs.F1 = 2 * cs.Precision * cs.Recall / (cs.Precision + cs.Recall)
		}
		rep.PerClass[gold] = cs
		f1sum += cs.F1
	}
	// Classes only ever predicted get a row with zero support, for the
	// record; they do not enter the macro average.
	for pred, n := range predicted {
		if !labels[pred] && n > 0 {
			rep.PerClass[pred] = ClassScore{}
		}
	}
	rep.MacroF1 = f1sum / float64(len(labels))
}

// LoadJSONL reads {"text", "label"} lines (other keys are ignored).
func LoadJSONL(path string) ([]Labeled, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	defer f.Close()
	var out []Labeled
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l Labeled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("router: %s:%d: %w", path, line, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("router: %s: %w", path, err)
	}
	return out, nil
}

// WriteText prints the report as a small text table.
func (r Report) WriteText(w io.Writer) error {
	classes := make([]string, 0, len(r.PerClass))
	for c := range r.PerClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "n=%d accuracy=%.4f macro_f1=%.4f substantive_to_chitchat=%.4f p50=%.1fus tokens/query=%.1f errors=%d\n",
		r.N, r.Accuracy, r.MacroF1, r.SubstantiveToChitchat, r.P50US, r.TokensPerQuery, r.Errors)
	fmt.Fprintf(bw, "%-11s %9s %9s %9s %8s   confusion (predicted)\n", "class", "precision", "recall", "f1", "support")
	for _, c := range classes {
		s := r.PerClass[c]
		fmt.Fprintf(bw, "%-11s %9.4f %9.4f %9.4f %8d  ", c, s.Precision, s.Recall, s.F1, s.Support)
		for _, p := range classes {
			fmt.Fprintf(bw, " %s=%d", p, r.Confusion[c][p])
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}
