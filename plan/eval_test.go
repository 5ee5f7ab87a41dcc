package plan

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// dataDir returns the shared evaluation data directory: $ADAPTRAG_DATA, or
// ../shared/data beside the checkout.
func dataDir() string {
	if d := os.Getenv("ADAPTRAG_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "data")
}

type labelled struct {
	Text  string `json:"text"`
	Label string `json:"label"`
}

func readLabelled(t *testing.T, path string) []labelled {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("evaluation data not present (%v); skipping", err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// TestRouterDataSets runs Decide over the router dev and train sets. The route rules are
// deliberately conservative, so the figure that matters is how often a
// question that needs the knowledge base (factual, analytical) is answered
// with a fixed text instead: that must stay under 1%. The share of chitchat
// answered directly is logged for information (the dev chitchat is mostly
// small talk about the bot, which goes to retrieval and finds nothing).
func TestRouterDataSets(t *testing.T) {
	p := New(testSettings)
	for _, name := range []string{"dev_en.jsonl", "dev_zh.jsonl", "train_en.jsonl", "train_zh.jsonl"} {
		t.Run(name, func(t *testing.T) {
			items := readLabelled(t, filepath.Join(dataDir(), "router", name))
			total := map[string]int{}
			direct := map[string]int{}
			for _, it := range items {
				total[it.Label]++
				d := p.Decide(Query{Text: it.Text})
				if d.Action == ActionDirect {
					direct[it.Label]++
					if it.Label != "chitchat" {
						t.Logf("%s question answered directly (%s): %q", it.Label, d.Reason, it.Text)
					}
				}
			}
			needs := total["factual"] + total["analytical"]
			wrong := direct["factual"] + direct["analytical"]
			t.Logf("chitchat answered directly: %d/%d; factual+analytical answered directly: %d/%d",
				direct["chitchat"], total["chitchat"], wrong, needs)
			if needs > 0 && float64(wrong) > 0.01*float64(needs) {
				t.Errorf("%d of %d knowledge questions short-circuited to a fixed answer (limit 1%%)", wrong, needs)
			}
		})
	}
}
