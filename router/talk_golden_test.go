package router_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/adaptrag/adaptrag/router"
)

// The small-talk phrases added for new domains, each with variants from
// more than one domain and with counterparts that must stay questions.
func TestTalkGolden(t *testing.T) {
	f, err := os.Open("testdata/talk_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g struct {
			Text string
			Only bool
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		if got := router.DetectSmallTalk(g.Text).Only; got != g.Only {
			t.Errorf("%q: small talk only = %v, want %v", g.Text, got, g.Only)
		}
	}
}
