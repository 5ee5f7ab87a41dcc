package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

// ruleGolden is one follow-up of a rule's golden file
// (testdata/rules/RULE.jsonl): the vocabulary's names, the history, the
// question, the rule that must decide ("" for any) and what the standalone
// query must and must not contain; Parts, when set, is how many parts
// SplitWith must find in the question.
type ruleGolden struct {
	Domain   string
	Names    names
	History  []query.Message
	Question string
	Rule     string
	Want     []string
	Not      []string
	Parts    int
}

// Every rule added for the new domains has a golden file of follow-ups,
// three at least from two domains or more, each rewritten (or split) as
// labelled.
func TestRuleGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rules", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("rule golden files: %v", err)
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		n, domains := 0, map[string]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var g ruleGolden
			if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			text := ""
			if g.Parts > 0 {
				parts := query.SplitWith(g.Names, g.Question)
				if len(parts) != g.Parts && !(g.Parts == 1 && parts == nil) {
					t.Errorf("%s: %q split into %q, want %d parts", file, g.Question, parts, g.Parts)
				}
				text = strings.Join(parts, " | ")
			} else {
				r, err := query.Offline{Vocab: g.Names}.Rewrite(context.Background(), g.Question, g.History)
				if err != nil {
					t.Fatal(err)
				}
				if g.Rule != "" && r.Rule != g.Rule {
					t.Errorf("%s: %q: rule %s, want %s (%q)", file, g.Question, r.Rule, g.Rule, r.Text)
				}
				text = r.Text
				if g.Rule == query.RuleClarify && r.Clarify == nil {
					t.Errorf("%s: %q: no clarify", file, g.Question)
				}
			}
			for _, w := range g.Want {
				if !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
					t.Errorf("%s: %q -> %q: missing %q", file, g.Question, text, w)
				}
			}
			for _, w := range g.Not {
				if strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
					t.Errorf("%s: %q -> %q: holds %q", file, g.Question, text, w)
				}
			}
			if g.Rule != "" || g.Parts > 1 {
				n++
				domains[g.Domain] = true
			}
		}
		f.Close()
		if n < 3 || len(domains) < 2 {
			t.Errorf("%s: %d golden follow-ups from %d domains, want 3 from 2", file, n, len(domains))
		}
	}
}
