package adaptrag

import (
	"fmt"
	"slices"

	"github.com/adaptrag/adaptrag/api"
)

// V1 returns r in version 1 of the wire format (package api), without
// the debug record. Every list is non-nil, so that it marshals as [] and
// validates against api.Schema.
func (r *Result) V1() api.Response {
	out := api.Response{
		Version:  api.Version,
		TraceID:  r.TraceID,
		Question: r.Question,
		Query: api.Query{Text: r.Query.Text, Rewritten: r.Query.Rewritten, FollowUp: r.Query.FollowUp,
			Scope: api.Scope{Tenant: r.Query.Scope.Tenant, Actor: r.Query.Scope.Actor}},
		Answer:     r.Answer,
		AnsweredBy: api.AnsweredBy(r.AnsweredBy),
		Citations:  make([]api.Citation, 0, len(r.Citations)),
		Passages:   make([]api.Passage, 0, len(r.Docs)),
		Route: api.Route{QueryType: string(r.Route.QueryType), Confidence: r.Route.Confidence, Fallback: r.Route.Fallback,
			Reason: r.Route.Reason, Classifier: r.Route.Classifier},
		Path:     append([]string{}, r.Path...),
		SubTasks: make([]api.SubTask, 0, len(r.SubTasks)),
		Warnings: make([]api.Warning, 0, len(r.Warnings)),
		Usage: api.Usage{Ms: r.Usage.Ms, TokensIn: r.Usage.TokensIn, TokensOut: r.Usage.TokensOut,
			Nodes: make([]api.NodeUsage, 0, len(r.Usage.Nodes))},
	}
	if r.Route.Fallback && r.Route.Cause != "" {
		out.Route.Reason = r.Route.Cause
	}
	for _, c := range r.Citations {
		out.Citations = append(out.Citations, api.Citation{N: c.N, ID: c.ID, Origin: c.Origin, Locator: c.Locator, Title: c.Title, Source: c.Source})
	}
	for _, d := range r.Docs {
		out.Passages = append(out.Passages, api.Passage{N: d.N, ID: d.ID, Collection: d.Collection, Origin: d.Origin, Locator: d.Locator,
			Title: d.Title, Source: d.Source, Relevance: clamp01(d.Relevance), Text: d.Text})
	}
	if p := r.Plan; p != nil {
		intent := ""
		if r.Intent != nil {
			intent = r.Intent.Intent
		}
		out.Plan = &api.Plan{Summary: PlanSummary(r), Mode: string(p.Mode), Intent: intent, DocTopK: p.DocTopK,
			FinalContextTopN: p.FinalContextTopN, MinContextScore: p.MinContextScore, FAQ: p.RunFAQ, Rerank: p.Rerank, Reason: p.Reason}
	}
	if c := r.Clarify; c != nil {
		out.Clarify = &api.Clarify{Mention: c.Mention, Candidates: append([]string{}, c.Candidates...)}
	}
	for _, p := range r.Parts {
		out.Parts = append(out.Parts, api.Part{N: p.N, Question: p.Question, Route: string(p.Route),
			Evidence: append([]string{}, p.Evidence...), Status: api.Status(p.Status)})
	}
	for _, t := range r.SubTasks {
		out.SubTasks = append(out.SubTasks, api.SubTask{Node: t.Node, Kind: t.Kind, Task: t.Task, Input: t.Input, Query: t.Query, Filter: t.Filter, Hits: t.Hits,
			Evidence: slices.Clone(t.IDs), Status: api.Status(t.Status), Ms: t.Ms, Error: t.Err})
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, api.Warning{Node: w.Node, Kind: api.WarningKind(w.Kind), Message: w.Message})
	}
	for _, u := range r.Usage.Nodes {
		out.Usage.Nodes = append(out.Usage.Nodes, api.NodeUsage{Node: u.Node, Ms: u.Ms, TokensIn: u.InputTokens, TokensOut: u.OutputTokens})
	}
	return out
}

// V1Debug is V1 with the debug record: r itself, whose shape is not part
// of the wire format.
func (r *Result) V1Debug() api.Response {
	out := r.V1()
	out.Debug = r
	return out
}

// PlanSummary is the one line "adaptrag ask" prints for a run's plan: the
// mode and the intent, the candidates searched and the passages kept, the
// lowest relevance kept and the rules that fired ("" when the run made no
// plan).
func PlanSummary(r *Result) string {
	p := r.Plan
	if p == nil {
		return ""
	}
	intent := "-"
	if r.Intent != nil && r.Intent.Intent != "" {
		intent = r.Intent.Intent
	}
	return fmt.Sprintf("%s via %s, %d candidates -> %d passages, relevance >= %.2f; %s",
		p.Mode, intent, p.DocTopK, p.FinalContextTopN, p.MinContextScore, p.Reason)
}

func clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	}
	return 0 // negative or NaN
}

// MaxQuestionRunes is the longest question p accepts, in characters
// (Options.MaxQuestionRunes, or its default), for front ends that check
// before sending (the service reports it in api.Limits).
func (p *Pipeline) MaxQuestionRunes() int { return p.maxRunes }
