package query_test

import (
	"context"
	"os"
	"strings"
	"testing"

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

// TestEvaluateOwnSet runs the offline rewriter on the package's own test set.
func TestEvaluateOwnSet(t *testing.T) {
	rep := report(t, "testdata/conversations.jsonl")
	if rep.Cases < 60 {
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

// TestEvaluateDev reports the figures on the shared development set when it
// is present. It is not tuned to: it only logs and checks the floor.
func TestEvaluateDev(t *testing.T) {
	const path = "/work/shared/data/conversation/dev.jsonl"
	if _, err := os.Stat(path); err != nil {
		t.Skip("development set not present")
	}
	report(t, path)
}
