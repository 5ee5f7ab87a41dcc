package main

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/plan"
)

// runPlan prints seed 000's planning output for a question: the route
// decision, the intent and the retrieval plan. It performs no retrieval.
func runPlan(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "plan")
	var history multi
	fs.Var(&history, "history", "an earlier user turn (repeatable, oldest first)")
	source := fs.String("source", "", "the source the caller selected")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one QUESTION, got %d arguments", errUsage, len(pos))
	}
	res := plan.New(plan.Settings{}).Prepare(plan.Query{Text: pos[0], History: history, Source: *source})
	if *asJSON {
		return writeJSON(e.stdout, res)
	}
	r := res.Route
	fmt.Fprintf(e.stdout, "route:  %s %s\n", r.Route, r.Reason)
	if r.Answer != "" {
		fmt.Fprintf(e.stdout, "answer: %s\n", r.Answer)
	}
	if res.Intent != nil {
		fmt.Fprintf(e.stdout, "intent: %s (confidence %.2f, rewrite %v, source %q; %s)\n", res.Intent.Intent, res.Intent.Confidence, res.Intent.RequiresRewrite, res.Intent.SuggestedSource, res.Intent.Reason)
	}
	if p := res.Plan; p != nil {
		fmt.Fprintf(e.stdout, "plan:   faq %v (top %d, direct >= %.2f, exact only %v), doc %v (top %d), rerank %v, context %d, variants %v\n",
			p.RunFAQ, p.FAQTopK, p.FAQDirectThreshold, p.FAQDirectExactOnly, p.RunDoc, p.DocTopK, p.Rerank, p.FinalContextTopN, p.UseQueryVariants)
		fmt.Fprintf(e.stdout, "        category %s, prefer table %v, reason %s\n", p.QuestionCategory, p.PreferTable, p.Reason)
	}
	return nil
}
