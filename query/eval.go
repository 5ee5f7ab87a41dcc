package query

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/adaptrag/adaptrag/router"
)

// Expected outcomes of a Case.
const (
	OutcomeAnswer   = "answer"   // retrieve and answer
	OutcomeClarify  = "clarify"  // ask which candidate is meant; retrieve nothing
	OutcomeChitchat = "chitchat" // small talk; retrieve nothing
)

// Case is a labelled conversation turn.
type Case struct {
	ID       string    `json:"id"`
	History  []Message `json:"history"`
	Question string    `json:"question"`
	Expect   Expect    `json:"expect"`
}

// Expect is what a Case expects of the understanding of its question.
type Expect struct {
	Outcome string `json:"outcome"`
	// MustMention are strings the standalone query must contain,
	// MustNotMention strings it must not (compared without case, width,
	// spaces and punctuation).
	MustMention    []string `json:"must_mention,omitempty"`
	MustNotMention []string `json:"must_not_mention,omitempty"`
	// Candidates are what a clarify question must offer.
	Candidates []string `json:"candidates,omitempty"`
	// Subquestions is the number of independent parts (1: one ask, not to
	// be split; 0: not labelled).
	Subquestions int `json:"subquestions,omitempty"`
	// Facts are strings the cited passages should hold (unused here).
	Facts []string `json:"facts,omitempty"`
}

// LoadCases reads cases from a JSON Lines file (one Case a line, blank lines
// skipped).
func LoadCases(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := ReadCases(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// ReadCases reads cases in JSON Lines from r.
func ReadCases(r io.Reader) ([]Case, error) {
	var out []Case
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var c Case
		if err := json.Unmarshal([]byte(b), &c); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		switch c.Expect.Outcome {
		case OutcomeAnswer, OutcomeClarify, OutcomeChitchat:
		default:
			return nil, fmt.Errorf("line %d: case %q: unknown outcome %q", line, c.ID, c.Expect.Outcome)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// Report is the result of Evaluate. Rates are in [0, 1]; a rate with no
// case to measure is 1 for accuracies and 0 for the wrong-entity rate.
type Report struct {
	Cases int
	// OutcomeAccuracy: the predicted outcome (clarify when Clarify != nil,
	// chitchat when the question is only small talk, else answer) equals
	// the expected one.
	OutcomeAccuracy float64
	// EntityRecall: must_mention strings found in the standalone queries of
	// answer cases, over all such strings.
	EntityRecall float64
	// WrongEntityRate: answer cases with a must_not_mention list whose query
	// contains one of them, over those cases.
	WrongEntityRate float64
	// ClarifyPrecision and ClarifyRecall of the clarify outcome;
	// CandidatesExact: clarify cases answered with exactly the expected
	// candidates, over the clarify cases answered with a clarify.
	ClarifyPrecision, ClarifyRecall, CandidatesExact float64
	// SubquestionRecall: cases labelled with N >= 2 parts where
	// len(Split(Text)) == N. ChainsKept: cases labelled 1 that Split leaves
	// whole.
	SubquestionRecall, ChainsKept float64
	// Passed counts the cases that missed nothing.
	Passed int
	// Errors counts rewriter errors (the question is then used as is).
	Errors int
	// Counts behind the rates.
	Mentions, MentionsFound, WrongChecked, Wrong, ClarifyExpected, ClarifyPredicted, ClarifyCorrect, ClarifyExact,
	Compound, CompoundOK, Chains, ChainsOK int
	// Rules counts the cases each rule decided (Rewrite.Rule), so that a
	// report says how often each rule fired on the set.
	Rules map[string]int `json:",omitempty"`
	// RulesPassed counts, per rule, the cases it decided that passed.
	RulesPassed map[string]int `json:",omitempty"`
	// ByRule makes WriteText print a table of each rule's cases fired and
	// passed (the eval command's --by-rule).
	ByRule bool `json:"-"`
	// Failures lists every case that missed something, for reading.
	Failures []Failure
}

// Failure is one missed expectation.
type Failure struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Text     string `json:"text"` // the standalone query
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

// Predicted returns the outcome a Rewrite stands for.
func Predicted(question string, r Rewrite) string {
	switch {
	case r.Clarify != nil:
		return OutcomeClarify
	case r.SmallTalk || router.DetectSmallTalk(question).Only:
		return OutcomeChitchat
	}
	return OutcomeAnswer
}

// Splitter is a Rewriter that also splits a standalone query into parts
// as the product does (with the knowledge base's vocabulary, say);
// Evaluate uses it instead of Split when r implements it.
type Splitter interface {
	SplitQuery(ctx context.Context, text string) []string
}

// Evaluate runs r on every case and measures the outcome, the entities of
// the standalone queries, the clarify decisions and the splitting of
// compound questions. A rewriter error counts in Errors and the question is
// scored as is.
func Evaluate(ctx context.Context, r Rewriter, cases []Case) Report {
	rep := Report{Cases: len(cases)}
	split := func(text string) []string { return Split(text) }
	if sp, ok := r.(Splitter); ok {
		split = func(text string) []string { return sp.SplitQuery(ctx, text) }
	}
	correct := 0
	for _, c := range cases {
		rw, err := r.Rewrite(ctx, c.Question, c.History)
		if err != nil {
			rep.Errors++
			rw = Rewrite{Text: c.Question}
		}
		if rw.Text == "" {
			rw.Text = c.Question
		}
		if rw.Rule != "" {
			if rep.Rules == nil {
				rep.Rules = map[string]int{}
			}
			rep.Rules[rw.Rule]++
		}
		fail := func(format string, a ...any) {
			rep.Failures = append(rep.Failures, Failure{ID: c.ID, Question: c.Question, Text: rw.Text, Rule: rw.Rule, Reason: fmt.Sprintf(format, a...)})
		}
		before := len(rep.Failures)
		got := Predicted(c.Question, rw)
		if got == c.Expect.Outcome {
			correct++
		} else {
			fail("outcome %s, want %s", got, c.Expect.Outcome)
		}
		if got == OutcomeClarify {
			rep.ClarifyPredicted++
		}
		switch c.Expect.Outcome {
		case OutcomeClarify:
			rep.ClarifyExpected++
			if got == OutcomeClarify {
				rep.ClarifyCorrect++
				if sameSet(rw.Clarify.Candidates, c.Expect.Candidates) {
					rep.ClarifyExact++
				} else {
					fail("candidates %v, want %v", rw.Clarify.Candidates, c.Expect.Candidates)
				}
			}
		case OutcomeAnswer:
			for _, m := range c.Expect.MustMention {
				rep.Mentions++
				if containsFold(rw.Text, m) {
					rep.MentionsFound++
				} else {
					fail("missing %q", m)
				}
			}
			if len(c.Expect.MustNotMention) > 0 {
				rep.WrongChecked++
				for _, m := range c.Expect.MustNotMention {
					if containsFold(rw.Text, m) {
						rep.Wrong++
						fail("wrong entity %q", m)
						break
					}
				}
			}
		}
		switch n := c.Expect.Subquestions; {
		case n >= 2:
			rep.Compound++
			if parts := split(rw.Text); len(parts) == n {
				rep.CompoundOK++
			} else {
				fail("split into %d parts %q, want %d", len(parts), parts, n)
			}
		case n == 1:
			rep.Chains++
			if parts := split(rw.Text); len(parts) <= 1 {
				rep.ChainsOK++
			} else {
				fail("split a single ask into %q", parts)
			}
		}
		if len(rep.Failures) == before {
			rep.Passed++
			if rw.Rule != "" {
				if rep.RulesPassed == nil {
					rep.RulesPassed = map[string]int{}
				}
				rep.RulesPassed[rw.Rule]++
			}
		}
	}
	rate := func(a, b int, empty float64) float64 {
		if b == 0 {
			return empty
		}
		return float64(a) / float64(b)
	}
	rep.OutcomeAccuracy = rate(correct, len(cases), 1)
	rep.EntityRecall = rate(rep.MentionsFound, rep.Mentions, 1)
	rep.WrongEntityRate = rate(rep.Wrong, rep.WrongChecked, 0)
	rep.ClarifyPrecision = rate(rep.ClarifyCorrect, rep.ClarifyPredicted, 1)
	rep.ClarifyRecall = rate(rep.ClarifyCorrect, rep.ClarifyExpected, 1)
	rep.CandidatesExact = rate(rep.ClarifyExact, rep.ClarifyCorrect, 1)
	rep.SubquestionRecall = rate(rep.CompoundOK, rep.Compound, 1)
	rep.ChainsKept = rate(rep.ChainsOK, rep.Chains, 1)
	return rep
}

func sameSet(a, b []string) bool {
	norm := func(xs []string) []string {
		out := make([]string, len(xs))
		for k, x := range xs {
			out[k] = compactKey(x)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}

// WriteText writes the report as a small table followed by the failures.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cases                %d (rewriter errors %d)\n", r.Cases, r.Errors)
	fmt.Fprintf(&b, "cases passed         %d/%d\n", r.Passed, r.Cases)
	fmt.Fprintf(&b, "outcome accuracy     %.3f\n", r.OutcomeAccuracy)
	fmt.Fprintf(&b, "entity recall        %.3f (%d/%d)\n", r.EntityRecall, r.MentionsFound, r.Mentions)
	fmt.Fprintf(&b, "wrong-entity rate    %.3f (%d/%d)\n", r.WrongEntityRate, r.Wrong, r.WrongChecked)
	fmt.Fprintf(&b, "clarify precision    %.3f (%d/%d)\n", r.ClarifyPrecision, r.ClarifyCorrect, r.ClarifyPredicted)
	fmt.Fprintf(&b, "clarify recall       %.3f (%d/%d)\n", r.ClarifyRecall, r.ClarifyCorrect, r.ClarifyExpected)
	fmt.Fprintf(&b, "candidates exact     %.3f (%d/%d)\n", r.CandidatesExact, r.ClarifyExact, r.ClarifyCorrect)
	fmt.Fprintf(&b, "sub-question recall  %.3f (%d/%d)\n", r.SubquestionRecall, r.CompoundOK, r.Compound)
	fmt.Fprintf(&b, "chains kept whole    %.3f (%d/%d)\n", r.ChainsKept, r.ChainsOK, r.Chains)
	if len(r.Rules) > 0 {
		names := make([]string, 0, len(r.Rules))
		for k := range r.Rules {
			names = append(names, k)
		}
		slices.Sort(names)
		b.WriteString("rules fired         ")
		for _, k := range names {
			fmt.Fprintf(&b, " %s=%d", k, r.Rules[k])
		}
		b.WriteString("\n")
		if r.ByRule {
			fmt.Fprintf(&b, "%-20s %5s %6s\n", "rule", "fired", "passed")
			for _, k := range names {
				fmt.Fprintf(&b, "%-20s %5d %6d\n", k, r.Rules[k], r.RulesPassed[k])
			}
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "FAIL %s [%s] %q -> %q: %s\n", f.ID, f.Rule, f.Question, f.Text, f.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
