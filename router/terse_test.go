package router_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/adaptrag/adaptrag/router"
)

// terseScore classifies keyword-style items labelled "substantive" or
// "chitchat". A substantive item fails when the classifier says chitchat at
// any confidence; a chitchat item is kept when the default policy routes it
// to chitchat (confidence at least DefaultMinConfidence).
func terseScore(t *testing.T, c router.Classifier, items []router.Labeled) (subToChit, subN, kept, chitN int) {
	t.Helper()
	for _, it := range items {
		p, err := c.Classify(context.Background(), it.Text)
		d := router.Policy{}.Decide(p, err)
		switch it.Label {
		case "substantive":
			subN++
			if err == nil && p.QueryType == router.Chitchat {
				subToChit++
				t.Logf("substantive -> chitchat: %q (%s %.2f)", it.Text, p.QueryType, p.Confidence)
			}
		case string(router.Chitchat):
			chitN++
			if d.Route == router.Chitchat {
				kept++
			} else {
				t.Logf("chitchat not kept: %q -> %s (%s %.2f)", it.Text, d.Route, p.QueryType, p.Confidence)
			}
		default:
			t.Fatalf("%q: label %q, want substantive or chitchat", it.Text, it.Label)
		}
	}
	return
}

func checkTerse(t *testing.T, path string) {
	items, err := router.LoadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	subToChit, subN, kept, chitN := terseScore(t, offline(t), items)
	if subN == 0 || chitN == 0 {
		t.Fatalf("%s: %d substantive and %d chitchat items", path, subN, chitN)
	}
	keptShare := float64(kept) / float64(chitN)
	t.Logf("%s: substantive->chitchat %d of %d; chitchat kept %d of %d (%.3f)", filepath.Base(path), subToChit, subN, kept, chitN, keptShare)
	if subToChit != 0 {
		t.Errorf("%d of %d substantive queries routed to chitchat, want 0", subToChit, subN)
	}
	if keptShare < 0.95 {
		t.Errorf("chitchat kept %.3f, want >= 0.95", keptShare)
	}
}

// testdata/terse.jsonl: keyword queries the way an agent's tool call or a
// search box sends them (codes, ids, standards, config keys, two to four
// keywords, single nouns, elliptical fragments) and greetings, thanks,
// farewells and small talk in varied surface forms, Chinese and English.
// It was written before the router was tuned for such queries and shares no
// line with the training data (router/internal/train checks that).
func TestOfflineTerse(t *testing.T) {
	checkTerse(t, filepath.Join("testdata", "terse.jsonl"))
}

// The shared terse development set, when present beside the checkout.
func TestOfflineTerseDev(t *testing.T) {
	dir := os.Getenv("ADAPTRAG_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	path := filepath.Join(dir, "conversation", "terse_dev.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("terse dev set not found (set ADAPTRAG_DATA): %v", err)
	}
	checkTerse(t, path)
}
