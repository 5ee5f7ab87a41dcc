package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

func runAsk(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "ask")
	var history multi
	fs.Var(&history, "history", `an earlier turn, oldest first (repeatable): "user: TEXT", "assistant: TEXT", or TEXT for a user turn`)
	historyFile := fs.String("history-file", "", `a JSON array of {"role": "user"|"assistant", "content": TEXT} messages`)
	clf := fs.String("classifier", "", "offline, llm or cascade (default: cascade with a model, offline without)")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "knowledge base: embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else the bundled sample)")
	source := fs.String("source", "", "restrict retrieval to one source of the knowledge base")
	tenant := fs.String("tenant", "", "tenant scope of the caller")
	actor := fs.String("actor", "", "who asks, for look-ups that check permissions")
	asJSON := fs.Bool("json", false, "print one JSON object: the v1 response (GET /v1/schema of the service describes it)")
	debug := fs.Bool("debug", false, "with --json: add the run's full internal record as \"debug\" (its shape is not stable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one QUESTION (quote it), got %d arguments", errUsage, len(pos))
	}
	if err := checkQuestionArg(pos[0]); err != nil {
		return err
	}
	msgs, err := historyMessages(history, *historyFile)
	if err == nil {
		if verr := (adaptrag.Request{Question: pos[0], History: msgs}).Validate(); verr != nil {
			err = fmt.Errorf("%w: %w", errUsage, verr)
		}
	}
	if err != nil {
		return err
	}
	a, err := build(ctx, options{classifier: *clf, store: *store, llm: llm.ConfigFromEnv()})
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	res, err := a.pipe.Ask(ctx, adaptrag.Request{Question: pos[0], History: msgs, Source: *source,
		Scope: retrieval.Scope{Tenant: *tenant}, Actor: *actor})
	if err != nil {
		return err
	}
	if *asJSON {
		if *debug {
			return writeJSON(e.stdout, res.V1Debug())
		}
		return writeJSON(e.stdout, res.V1())
	}
	printAnswer(e.stdout, res)
	return nil
}

// checkQuestionArg turns a question the pipeline would refuse into a usage
// error (exit status 2) before anything is loaded.
func checkQuestionArg(q string) error {
	if err := (adaptrag.Request{Question: q}).Validate(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return nil
}

// historyMessages reads --history flags and --history-file.
func historyMessages(flags []string, file string) ([]adaptrag.Message, error) {
	var msgs []adaptrag.Message
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: --history-file: %w", errUsage, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&msgs); err != nil {
			return nil, fmt.Errorf("%w: --history-file %s: want a JSON array of {\"role\", \"content\"}: %v", errUsage, file, err)
		}
	}
	for _, h := range flags {
		m := adaptrag.Message{Role: state.RoleUser, Content: h}
		if role, rest, ok := strings.Cut(h, ":"); ok {
			switch strings.ToLower(strings.TrimSpace(role)) {
			case "user":
				m.Content = strings.TrimSpace(rest)
			case "assistant":
				m = adaptrag.Message{Role: state.RoleAssistant, Content: strings.TrimSpace(rest)}
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// writeJSON prints v as indented JSON. The text stays exact, and nothing
// in it can act on a terminal: encoding/json escapes the C0 controls, and
// the C1 controls and bidirectional overrides, which it leaves as they
// are, are escaped too (see escapeTerminal).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeTerminal(buf.Bytes()))
	return err
}

// printAnswer writes the human form of a result. Text that comes from
// documents or models is cleaned of terminal control sequences.
func printAnswer(w io.Writer, res *adaptrag.Result) {
	r := res.Route
	switch {
	case res.Clarify != nil:
		fmt.Fprintf(w, "route:  ask back: %q could mean %s\n", res.Clarify.Mention, strings.Join(res.Clarify.Candidates, ", "))
	case res.AnsweredBy == state.ByAskEntity:
		fmt.Fprintln(w, "route:  ask back: the question refers to a record without its id")
	case res.Decision.Action == plan.ActionDirect:
		fmt.Fprintf(w, "route:  direct answer (%s)\n", res.Decision.Reason)
	case r.Fallback:
		fmt.Fprintf(w, "route:  %s (fallback: %s)\n", r.QueryType, clean(r.Cause))
	default:
		fmt.Fprintf(w, "route:  %s, %s, confidence %.2f (%s; %s classifier)\n", r.QueryType, r.Complexity, r.Confidence, clean(r.Reason), r.Classifier)
	}
	if res.Plan != nil {
		fmt.Fprintf(w, "plan:   %s\n", adaptrag.PlanSummary(res))
	}
	if res.Query.Rewritten {
		fmt.Fprintf(w, "query:  %s\n", clean(res.Query.Text))
		for _, rv := range res.Query.Resolved {
			fmt.Fprintf(w, "        %q -> %s (turn %d)\n", rv.Mention, clean(rv.Value), rv.Turn)
		}
	}
	for _, p := range res.Parts {
		fmt.Fprintf(w, "part %d: %s (%s, %d passages)\n", p.N, clean(p.Question), p.Route, len(p.Evidence))
	}
	for _, h := range res.Hops {
		found := h.Found
		if h.Error != "" {
			found = h.Error
		}
		fmt.Fprintf(w, "hop %d:  %s %s -> %s (%s)\n", h.N, h.Kind, clean(h.Input), clean(found), h.Status)
	}
	if a := res.Aggregate; a != nil {
		fmt.Fprintf(w, "query:  %s over %d records\n", a.Query, len(a.Records))
	}
	fmt.Fprintf(w, "path:   %s\n", strings.Join(append(append([]string{graph.Start}, res.Path...), graph.End), " -> "))
	if len(res.Docs) > 0 {
		fmt.Fprintf(w, "\nevidence (%d passages):\n", len(res.Docs))
		for _, d := range res.Docs {
			where := d.Origin
			if d.Locator != "" {
				where += " · " + d.Locator
			}
			if where == "" {
				where = d.Source + " · " + d.Title
			}
			fmt.Fprintf(w, "  [%d] relevance %.2f (%s %.3f) %s\n      %s\n", d.N, d.Relevance, d.Method, d.Score, clean(where), clean(oneLine(d.Text, 110)))
		}
	}
	fmt.Fprintf(w, "\nanswer (%s):\n%s\n", res.AnsweredBy, clean(res.Answer))
	for _, wn := range res.Warnings {
		fmt.Fprintf(w, "\nnote: %s %s: %s\n", wn.Node, wn.Kind, clean(wn.Message))
	}
	fmt.Fprintln(w, "\nusage:")
	for _, u := range res.Usage.Nodes {
		fmt.Fprintf(w, "  %-10s %8.2f ms  %5d in  %5d out\n", u.Node, u.Ms, u.InputTokens, u.OutputTokens)
	}
	fmt.Fprintf(w, "  %-10s %8.2f ms  %5d in  %5d out\n", "total", res.Usage.Ms, res.Usage.TokensIn, res.Usage.TokensOut)
	if res.TraceID != "" {
		fmt.Fprintf(w, "trace:  %s\n", res.TraceID)
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
