package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/nodes"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

func runAsk(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ask")
	var history multi
	fs.Var(&history, "history", "an earlier user turn (repeatable, oldest first)")
	clf := fs.String("classifier", "", "offline, llm or cascade (default: cascade with a model, offline without)")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "knowledge base: embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else the bundled sample)")
	source := fs.String("source", "", "restrict retrieval to one source (hr, finance, it, admin, after_sales, legal)")
	tenant := fs.String("tenant", "", "tenant scope of the caller")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one QUESTION (quote it), got %d arguments", errUsage, len(pos))
	}
	a, err := build(ctx, options{classifier: *clf, store: *store, llm: llm.ConfigFromEnv()})
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	res, err := a.pipe.Ask(ctx, nodes.Request{Question: pos[0], History: history, Source: *source, Scope: retrieval.Scope{Tenant: *tenant}}, nil)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, askJSON(res))
	}
	printAnswer(e.stdout, res)
	return nil
}

// askOutput is the --json shape of ask.
type askOutput struct {
	Route     routeOut            `json:"route"`
	Path      []string            `json:"path"`
	Docs      []docOut            `json:"docs"`
	Answer    string              `json:"answer"`
	Citations []state.Citation    `json:"citations"`
	Usage     map[string]usageOut `json:"usage"`
	TraceID   string              `json:"trace_id"`
	Decision  any                 `json:"decision"`
	Plan      any                 `json:"retrieval_plan,omitempty"`
	Strategy  state.Strategy      `json:"strategy"`
	Errors    []state.NodeError   `json:"errors,omitempty"`
	Rerank    *state.RerankInfo   `json:"rerank,omitempty"`
	Answered  string              `json:"answered_by"`
}

type routeOut struct {
	QueryType  string  `json:"query_type"`
	Complexity string  `json:"complexity"`
	Confidence float64 `json:"confidence"`
	Reason     string  `json:"reason"`
	Fallback   bool    `json:"fallback"`
	Cause      string  `json:"cause,omitempty"`
}

type docOut struct {
	ID     string  `json:"id"`
	Source string  `json:"source"`
	Title  string  `json:"title"`
	Score  float64 `json:"score"`
	Text   string  `json:"text"`
}

type usageOut struct {
	Ms        float64 `json:"ms"`
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
}

func askJSON(res nodes.Result) askOutput {
	s := res.State
	out := askOutput{
		Route: routeOut{QueryType: s.Route.QueryType, Complexity: s.Route.Complexity, Confidence: s.Route.Confidence,
			Reason: s.Route.Reason, Fallback: s.Route.Fallback, Cause: s.Route.Cause},
		Path: res.Path.Nodes, Answer: s.Answer, Citations: s.Citations, TraceID: res.TraceID,
		Usage: map[string]usageOut{}, Decision: s.Decision, Strategy: s.Strategy, Errors: s.Errors, Answered: s.AnsweredBy,
		Docs: []docOut{},
	}
	if out.Path == nil {
		out.Path = []string{}
	}
	if out.Citations == nil {
		out.Citations = []state.Citation{}
	}
	if s.Plan != nil {
		out.Plan = s.Plan
	}
	if s.Rerank.Reranker != "" {
		out.Rerank = &s.Rerank
	}
	for _, h := range s.Docs {
		out.Docs = append(out.Docs, docOut{ID: h.Chunk.ID, Source: h.Chunk.Source, Title: h.Chunk.Title, Score: h.Score, Text: h.Chunk.Text})
	}
	for _, u := range s.Usage {
		o := out.Usage[u.Node]
		o.Ms += u.Ms
		o.TokensIn += u.InputTokens
		o.TokensOut += u.OutputTokens
		out.Usage[u.Node] = o
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printAnswer(w io.Writer, res nodes.Result) {
	s := res.State
	r := s.Route
	switch {
	case s.Decision.Route == "direct_answer":
		fmt.Fprintf(w, "route:  direct answer (%s)\n", s.Decision.Reason)
	case r.Fallback:
		fmt.Fprintf(w, "route:  %s (fallback: %s)\n", r.QueryType, r.Cause)
	default:
		fmt.Fprintf(w, "route:  %s, %s, confidence %.2f (%s; %s classifier)\n", r.QueryType, r.Complexity, r.Confidence, r.Reason, r.Classifier)
	}
	if s.Plan != nil {
		fmt.Fprintf(w, "plan:   %s via %s, %d candidates -> %d passages; plan %s\n", s.Strategy.Mode, planIntent(s), s.Strategy.Candidates, s.Strategy.Context, s.Plan.Reason)
	}
	fmt.Fprintf(w, "path:   %s\n", strings.Join(append(append([]string{graph.Start}, res.Path.Nodes...), graph.End), " -> "))
	if len(s.Docs) > 0 {
		fmt.Fprintf(w, "\ncontext (%d passages):\n", len(s.Docs))
		for i, h := range s.Docs {
			fmt.Fprintf(w, "  [%d] %.3f %-9s %s · %s\n      %s\n", i+1, h.Score, h.Method, h.Chunk.Source, h.Chunk.Title, oneLine(h.Chunk.Text, 110))
		}
	}
	fmt.Fprintf(w, "\nanswer (%s):\n%s\n", s.AnsweredBy, s.Answer)
	for _, er := range s.Errors {
		fmt.Fprintf(w, "\nnote: %s %s: %s\n", er.Node, er.Kind, er.Err)
	}
	fmt.Fprintln(w, "\nusage:")
	var tin, tout int
	var total float64
	for _, u := range s.Usage {
		fmt.Fprintf(w, "  %-10s %8.2f ms  %5d in  %5d out\n", u.Node, u.Ms, u.InputTokens, u.OutputTokens)
		tin, tout, total = tin+u.InputTokens, tout+u.OutputTokens, total+u.Ms
	}
	fmt.Fprintf(w, "  %-10s %8.2f ms  %5d in  %5d out\n", "total", total, tin, tout)
	if res.TraceID != "" {
		fmt.Fprintf(w, "trace:  %s\n", res.TraceID)
	}
}

func planIntent(s state.RAG) string {
	if s.Intent == nil {
		return "-"
	}
	return s.Intent.Intent
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
