package main

import (
	"context"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/router"
)

// planOutput is the --json shape of plan: the plan command's Result plus
// the route when the question was profiled.
type planOutput struct {
	plan.Result
	Route *router.Profile `json:"route,omitempty"`
}

// runPlan prints the policy's output for a question without retrieving:
// the decision, the intent and the retrieval plan. Without --route or
// --classify the plan stops before the route stage (the rules alone); with
// either, it is the plan a run would use.
func runPlan(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "plan")
	var history multi
	fs.Var(&history, "history", "an earlier user turn (repeatable, oldest first)")
	source := fs.String("source", "", "the source the caller selected")
	route := fs.String("route", "", "the query type to plan for: chitchat, factual or analytical")
	classify := fs.Bool("classify", false, "profile the question with the offline classifier and plan for its route")
	sources := fs.String("sources", "", "a JSON source table (default: the bundled sample's, unless --store or $ADAPTRAG_STORE names another knowledge base)")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "the knowledge base the question is for (only decides the default source table)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one QUESTION, got %d arguments", errUsage, len(pos))
	}
	if err := checkQuestionArg(pos[0]); err != nil {
		return err
	}
	for i, h := range history {
		if !utf8.ValidString(h) {
			return fmt.Errorf("%w: --history %d: %w", errUsage, i+1, adaptrag.ErrInvalidUTF8)
		}
	}
	settings := policy(*store).Plan
	if *sources != "" {
		b, err := os.ReadFile(*sources)
		if err != nil {
			return fmt.Errorf("%w: --sources: %w", errUsage, err)
		}
		if settings.Sources, err = plan.ParseSources(b); err != nil {
			return fmt.Errorf("%w: --sources %s: %w", errUsage, *sources, err)
		}
	}
	out := planOutput{}
	qt := router.QueryType(*route)
	switch {
	case *route != "" && *classify:
		return fmt.Errorf("%w: --route and --classify exclude each other", errUsage)
	case *classify:
		off, err := router.NewOffline()
		if err != nil {
			return err
		}
		prof, err := off.Classify(ctx, pos[0])
		d := router.Policy{}.Decide(prof, err)
		qt, out.Route = d.Route, d.Profile
	case qt != "":
		if err := (router.Profile{QueryType: qt, Complexity: router.Simple}).Validate(); err != nil {
			return fmt.Errorf("%w: --route %q: want chitchat, factual or analytical", errUsage, *route)
		}
	}
	out.Result = plan.New(settings).Prepare(plan.Query{Text: pos[0], History: history, Source: *source}, qt)
	if *asJSON {
		return writeJSON(e.stdout, out)
	}
	d := out.Decision
	fmt.Fprintf(e.stdout, "decision: %s %s\n", d.Action, d.Reason)
	if out.Intent != nil {
		fmt.Fprintf(e.stdout, "intent:   %s (confidence %.2f, rewrite %v, source %q; %s)\n", out.Intent.Intent, out.Intent.Confidence, out.Intent.RequiresRewrite, out.Intent.SuggestedSource, out.Intent.Reason)
	}
	if qt == "" {
		fmt.Fprintln(e.stdout, "route:    not profiled (--route or --classify gives the plan a run would use)")
	} else {
		fmt.Fprintf(e.stdout, "route:    %s\n", qt)
	}
	if p := out.Plan; p != nil {
		fmt.Fprintf(e.stdout, "plan:     %s, faq %v (top %d, direct >= %.2f, exact only %v), doc top %d, rerank %v, passages %d, relevance >= %.2f, variants %v\n",
			p.Mode, p.RunFAQ, p.FAQTopK, p.FAQDirectThreshold, p.FAQDirectExactOnly, p.DocTopK, p.Rerank, p.FinalContextTopN, p.MinContextScore, p.UseQueryVariants)
		fmt.Fprintf(e.stdout, "          category %s, prefer table %v, reason %s\n", p.QuestionCategory, p.PreferTable, p.Reason)
	}
	return nil
}
