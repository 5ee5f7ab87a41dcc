package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

// names is a Vocabulary of fixed names for tests.
type names map[string]string

func (n names) Names(text string) []query.Name {
	var out []query.Name
	for name, kind := range n {
		for off := 0; ; {
			k := strings.Index(text[off:], name)
			if k < 0 {
				break
			}
			out = append(out, query.Name{Text: name, Kind: kind, Start: off + k, End: off + k + len(name)})
			off += k + len(name)
		}
	}
	slices.SortFunc(out, func(a, b query.Name) int { return a.Start - b.Start })
	return out
}

var testVocab = names{"Spark": "plan", "Flow": "plan", "Surge": "plan", "静安寺店": "store", "徐家汇店": "store", "轩逸": "car", "差旅": "expense"}

func TestVocabularyMoves(t *testing.T) {
	u := func(s string) query.Message { return query.Message{Role: "user", Content: s} }
	a := func(s string) query.Message { return query.Message{Role: "assistant", Content: s} }
	tests := []struct {
		name     string
		history  []query.Message
		question string
		rule     string
		text     string
		clarify  []string
	}{
		{"sibling replaces its kind", []query.Message{u("What is the hotspot allowance on Spark?")}, "What about Flow?", query.RuleEllipsisEntity, "What is the hotspot allowance on Flow?", nil},
		{"one candidate of a kind", []query.Message{u("我想在静安寺店取车。")}, "它周末营业吗？", query.RuleReference, "静安寺店周末营业吗？", nil},
		{"two of one kind ask back", []query.Message{u("我在静安寺店和徐家汇店之间选一家。")}, "它周末开门吗？", query.RuleClarify, "", []string{"静安寺店", "徐家汇店"}},
		{"words before the pronoun are no antecedent", []query.Message{u("I'm choosing between Flow and Surge.")}, "How much hotspot data does it give?", query.RuleClarify, "", []string{"Flow", "Surge"}},
		{"reply to a clarifying question", []query.Message{u("I'm choosing between Flow and Surge."), u("How much hotspot data does it give?"), a("Do you mean Flow or Surge?")},
			"The Surge one.", query.RuleClarifyReply, "How much hotspot data does Surge give?", nil},
		{"reply in Chinese", []query.Message{u("我在静安寺店和徐家汇店之间选一家。"), u("它周末开门吗？"), a("您指的是静安寺店还是徐家汇店？")},
			"徐家汇店", query.RuleClarifyReply, "徐家汇店周末开门吗？", nil},
		{"an unknown term replaces a known name read as a word", []query.Message{u("差旅报销要在多少天内提交？")}, "招待费呢？", query.RuleEllipsisSubject, "招待费要在多少天内提交？", nil},
		{"a new term with no slot is kept", []query.Message{u("Can I bring my dog to a Surge store?")}, "What about cats?", query.RuleKept, "What about cats?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := query.Offline{Vocab: testVocab}.Rewrite(context.Background(), tt.question, tt.history)
			if err != nil {
				t.Fatal(err)
			}
			if r.Rule != tt.rule {
				t.Errorf("rule %q, want %q (text %q)", r.Rule, tt.rule, r.Text)
			}
			if tt.text != "" && r.Text != tt.text {
				t.Errorf("text %q, want %q", r.Text, tt.text)
			}
			if tt.clarify != nil && (r.Clarify == nil || !slices.Equal(r.Clarify.Candidates, tt.clarify)) {
				t.Errorf("clarify %+v, want %q", r.Clarify, tt.clarify)
			}
		})
	}
}

// A kept follow-up searches with the previous question's keywords beside
// the question, never in its text.
func TestKeptFollowUpVariant(t *testing.T) {
	h := []query.Message{{Role: "user", Content: "What's the warranty on the P-204?"}}
	r, err := query.Offline{}.Rewrite(context.Background(), "What about the return policy?", h)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "What about the return policy?" || len(r.Variants) != 1 || !strings.Contains(r.Variants[0], "P-204") {
		t.Fatalf("text %q, variants %q", r.Text, r.Variants)
	}
}

// The check refuses a rewrite that keeps the history's name beside the
// question's new name of the same kind.
func TestCheckKeepsNoOldSibling(t *testing.T) {
	h := []query.Message{{Role: "user", Content: "What is the API limit on Spark?"}}
	if err := query.CheckWith(testVocab, "What about Flow?", h, "Flow: What is the API limit on Spark?"); err == nil {
		t.Fatal("a rewrite naming Spark beside Flow passed")
	}
	if err := query.CheckWith(testVocab, "What about Flow?", h, "What is the API limit on Flow?"); err != nil {
		t.Fatalf("the sibling rewrite was refused: %v", err)
	}
}

// A number written after a word is one name with it: a splice that moves
// the number alone ("the Pixel 15") is refused, and the question is kept.
func TestCheckSplitName(t *testing.T) {
	h := []query.Message{{Role: "user", Content: "Does eSIM work on the Pixel 8?"}}
	if err := query.Check("And the iPhone 15?", h, "iPhone Does eSIM work on the Pixel 15?"); err == nil {
		t.Fatal("the splice passed the check")
	}
	if err := query.Check("And the iPhone 15?", h, "Does eSIM work on the iPhone 15?"); err != nil {
		t.Fatalf("the right rewrite was refused: %v", err)
	}
	r, _ := query.Offline{}.Rewrite(context.Background(), "And the iPhone 15?", h)
	if strings.Contains(r.Text, "Pixel") {
		t.Fatalf("rewrite %q [%s]", r.Text, r.Rule)
	}
}
