package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/router"
)

// table classifies by lookup; "ERR" fails.
func table(m map[string]string) router.Classifier {
	return router.ClassifierFunc(func(_ context.Context, q string) (router.Profile, error) {
		if m[q] == "ERR" {
			return router.Profile{}, errors.New("boom")
		}
		return router.Profile{QueryType: router.QueryType(m[q]), Complexity: router.Simple, Confidence: 1}, nil
	})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestEvaluateHandComputed(t *testing.T) {
	// gold:      f f f a a c c c
	// predicted: f f a a c c c f
	items := []router.Labeled{
		{"q1", "factual"}, {"q2", "factual"}, {"q3", "factual"},
		{"q4", "analytical"}, {"q5", "analytical"},
		{"q6", "chitchat"}, {"q7", "chitchat"}, {"q8", "chitchat"},
	}
	c := table(map[string]string{"q1": "factual", "q2": "factual", "q3": "analytical", "q4": "analytical",
		"q5": "chitchat", "q6": "chitchat", "q7": "chitchat", "q8": "factual"})
	rep := router.Evaluate(context.Background(), c, items)
	if rep.N != 8 || !near(rep.Accuracy, 5.0/8) {
		t.Fatalf("n=%d accuracy=%v", rep.N, rep.Accuracy)
	}
	// factual: tp 2, predicted 3, support 3 -> P 2/3, R 2/3, F1 2/3
	// analytical: tp 1, predicted 2, support 2 -> P 1/2, R 1/2, F1 1/2
	// chitchat: tp 2, predicted 3, support 3 -> P 2/3, R 2/3, F1 2/3
	want := map[string]router.ClassScore{
		"factual":    {Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3, Support: 3},
		"analytical": {Precision: 0.5, Recall: 0.5, F1: 0.5, Support: 2},
		"chitchat":   {Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3, Support: 3},
	}
	for c, w := range want {
		g := rep.PerClass[c]
		if !near(g.Precision, w.Precision) || !near(g.Recall, w.Recall) || !near(g.F1, w.F1) || g.Support != w.Support {
			t.Errorf("%s: got %+v, want %+v", c, g, w)
		}
	}
	if !near(rep.MacroF1, (2.0/3+0.5+2.0/3)/3) {
		t.Errorf("macro F1 %v", rep.MacroF1)
	}
	// substantive items: 5 (3 factual + 2 analytical), one (q5) went to chitchat.
	if !near(rep.SubstantiveToChitchat, 1.0/5) {
		t.Errorf("substantive_to_chitchat %v", rep.SubstantiveToChitchat)
	}
	if rep.Confusion["analytical"]["chitchat"] != 1 || rep.Confusion["chitchat"]["factual"] != 1 || rep.Confusion["factual"]["factual"] != 2 {
		t.Errorf("confusion %v", rep.Confusion)
	}
	if rep.TokensPerQuery != 0 || rep.P50US < 0 {
		t.Errorf("tokens %v p50 %v", rep.TokensPerQuery, rep.P50US)
	}
}

func TestEvaluateErrorsAndTokensAndMissingClass(t *testing.T) {
	// Two classes in gold; an error counts as analytical (the fallback).
	items := []router.Labeled{{"a", "factual"}, {"b", "factual"}, {"c", "chitchat"}, {"d", "chitchat"}}
	inner := table(map[string]string{"a": "factual", "b": "ERR", "c": "chitchat", "d": "chitchat"})
	c := &usageFunc{inner: inner, usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}
	rep := router.Evaluate(context.Background(), c, items)
	if rep.Errors != 1 || rep.Confusion["factual"]["analytical"] != 1 {
		t.Fatalf("errors %d confusion %v", rep.Errors, rep.Confusion)
	}
	// factual: P 1/1, R 1/2 -> F1 2/3; chitchat: 1, 1 -> 1. Macro over the
	// two gold classes = 5/6.
	if !near(rep.MacroF1, 5.0/6) {
		t.Fatalf("macro F1 %v", rep.MacroF1)
	}
	if s, ok := rep.PerClass["analytical"]; !ok || s.Support != 0 {
		t.Fatalf("predicted-only class row: %+v %v", s, ok)
	}
	if !near(rep.TokensPerQuery, 120) {
		t.Fatalf("tokens per query %v", rep.TokensPerQuery)
	}
}

type usageFunc struct {
	inner router.Classifier
	usage llm.Usage
}

func (u *usageFunc) Classify(ctx context.Context, q string) (router.Profile, error) {
	return u.inner.Classify(ctx, q)
}

func (u *usageFunc) ClassifyWithUsage(ctx context.Context, q string) (router.Result, error) {
	p, err := u.inner.Classify(ctx, q)
	return router.Result{Profile: p, Usage: u.usage}, err
}

func TestReportJSONKeys(t *testing.T) {
	rep := router.Evaluate(context.Background(), table(map[string]string{"x": "factual"}), []router.Labeled{{"x", "factual"}})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"n", "accuracy", "macro_f1", "per_class", "confusion", "substantive_to_chitchat", "p50_us", "tokens_per_query"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing in %s", k, b)
		}
	}
	var pc map[string]map[string]float64
	_ = json.Unmarshal(m["per_class"], &pc)
	for _, k := range []string{"precision", "recall", "f1", "support"} {
		if _, ok := pc["factual"][k]; !ok {
			t.Errorf("per_class key %q missing: %s", k, m["per_class"])
		}
	}
	var sb strings.Builder
	if err := rep.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "macro_f1=1.0000") {
		t.Fatalf("text: %q %v", sb.String(), err)
	}
}

func TestLoadJSONL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jsonl")
	os.WriteFile(p, []byte(`{"text":"hi","label":"chitchat","id":"1"}`+"\n\n"+`{"text":"退货几天","label":"factual"}`+"\n"), 0o600)
	items, err := router.LoadJSONL(p)
	if err != nil || len(items) != 2 || items[1] != (router.Labeled{Text: "退货几天", Label: "factual"}) {
		t.Fatalf("%v %v", items, err)
	}
	os.WriteFile(p, []byte("{bad\n"), 0o600)
	if _, err := router.LoadJSONL(p); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("err = %v", err)
	}
	if _, err := router.LoadJSONL(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}
