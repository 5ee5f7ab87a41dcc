package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/internal/evaltest"
	"github.com/adaptrag/adaptrag/query"
)

func report(t *testing.T, path string) query.Report {
	t.Helper()
	cases, err := query.LoadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := query.Evaluate(context.Background(), query.Offline{}, cases)
	var b strings.Builder
	_ = rep.WriteText(&b)
	t.Logf("%s:\n%s", path, b.String())
	return rep
}

// TestEvaluateOwnSet runs the offline rewriter on the package's own test
// sets: conversations.jsonl, written before the rules, and
// conversations_blind.jsonl, written after them and first run unseen (its
// first run: entity recall 0.938, wrong-entity rate 1/13, all else 1.0).
func TestEvaluateOwnSet(t *testing.T) {
	for _, path := range []string{"testdata/conversations.jsonl", "testdata/conversations_blind.jsonl"} {
		t.Run(path, func(t *testing.T) { checkFloor(t, report(t, path)) })
	}
}

func checkFloor(t *testing.T, rep query.Report) {
	t.Helper()
	if rep.Cases < 30 {
		t.Fatalf("only %d cases", rep.Cases)
	}
	if rep.OutcomeAccuracy < 0.95 {
		t.Errorf("outcome accuracy %.3f < 0.95", rep.OutcomeAccuracy)
	}
	if rep.WrongEntityRate != 0 {
		t.Errorf("wrong-entity rate %.3f, want 0", rep.WrongEntityRate)
	}
	if rep.ClarifyRecall != 1 {
		t.Errorf("clarify recall %.3f, want 1", rep.ClarifyRecall)
	}
}

// TestEvaluateDev runs the offline rewriter on the shared development set
// (../shared/data/conversation/dev.jsonl from the repository root, or under
// $ADAPTRAG_DATA), which the rules were not tuned to, and holds it to the
// figures it reached when this test was written (14 cases; every rate 1.0,
// no wrong entity, no rewriter error): a rule change that loses any of
// them fails here. Skipped, with the path, when the data is absent.
func TestEvaluateDev(t *testing.T) {
	rep := report(t, evaltest.File(t, "conversation/dev.jsonl"))
	if rep.Cases < 14 || rep.Errors != 0 {
		t.Errorf("%d cases, %d rewriter errors; want at least 14 and none", rep.Cases, rep.Errors)
	}
	for _, m := range []struct {
		name string
		got  float64
	}{
		{"outcome accuracy", rep.OutcomeAccuracy}, {"entity recall", rep.EntityRecall},
		{"clarify precision", rep.ClarifyPrecision}, {"clarify recall", rep.ClarifyRecall},
		{"candidates exact", rep.CandidatesExact}, {"sub-question recall", rep.SubquestionRecall},
	} {
		if m.got < 1 {
			t.Errorf("%s %.3f, below the measured floor 1.000", m.name, m.got)
		}
	}
	if rep.WrongEntityRate > 0 {
		t.Errorf("wrong-entity rate %.3f, measured 0", rep.WrongEntityRate)
	}
}

// TestStandaloneAfterUnrelatedHistory feeds the router's development
// questions (factual and analytical, open-domain, zh and en) after an
// unrelated exchange about a product, and the terse keyword queries: a
// standalone question must come out as it went in. Each file is skipped,
// with its path, when the shared data lacks it.
func TestStandaloneAfterUnrelatedHistory(t *testing.T) {
	hist := map[string][]query.Message{
		"zh": {{Role: "user", Content: "SKU-3381 的保修期是多久？"}, {Role: "assistant", Content: "两年。"}},
		"en": {{Role: "user", Content: "What's the warranty on the SKU-3381?"}, {Role: "assistant", Content: "Two years."}},
	}
	files := map[string]string{
		"zh":    "router/dev_zh.jsonl",
		"en":    "router/dev_en.jsonl",
		"terse": "conversation/terse_dev.jsonl",
	}
	for _, name := range []string{"zh", "en", "terse"} {
		t.Run(name, func(t *testing.T) { standaloneUnchanged(t, evaltest.File(t, files[name]), hist, name) })
	}
}

// standaloneUnchanged checks the questions of one file (see
// TestStandaloneAfterUnrelatedHistory).
func standaloneUnchanged(t *testing.T, path string, hist map[string][]query.Message, name string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h := hist[name]
	if h == nil {
		h = hist["zh"]
	}
	n, changed := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var it struct{ Text, Label string }
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		if it.Label == "chitchat" {
			continue
		}
		n++
		r, err := query.Offline{}.Rewrite(context.Background(), it.Text, h)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rewritten || r.Clarify != nil || r.SmallTalk {
			changed++
			t.Logf("%s: %s %q -> %q", name, r.Rule, it.Text, r.Text)
		}
	}
	f.Close()
	rate := float64(changed) / float64(n)
	t.Logf("%s: %d of %d standalone questions changed (%.1f%%)", name, changed, n, 100*rate)
	if rate > 0.02 {
		t.Errorf("%s: %.1f%% of standalone questions changed, want at most 2%%", name, 100*rate)
	}
}
