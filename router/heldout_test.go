package router_test

import (
	"context"
	"testing"

	"github.com/adaptrag/adaptrag/router"
)

// testdata/enterprise_heldout.jsonl is a small set written for this test
// only, after the model was trained, and never used for fitting: help-desk
// questions in both languages, mixed case, greetings before questions and
// Chinese analytical questions, the kinds the public pools lack. It runs on
// every `go test`, without the shared data.
func TestOfflineEnterpriseHeldOut(t *testing.T) {
	items, err := router.LoadJSONL("testdata/enterprise_heldout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	off, err := router.NewOffline()
	if err != nil {
		t.Fatal(err)
	}
	rep := router.Evaluate(context.Background(), off, items)
	t.Logf("n=%d accuracy=%.3f macro_f1=%.3f substantive_to_chitchat=%.3f", rep.N, rep.Accuracy, rep.MacroF1, rep.SubstantiveToChitchat)
	if rep.MacroF1 < 0.9 || rep.SubstantiveToChitchat > 0 {
		t.Errorf("macro-F1 %.3f (want >= 0.90), substantive->chitchat %.3f (want 0)", rep.MacroF1, rep.SubstantiveToChitchat)
	}
}
