package nodes

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/state"
)

// CheckQuestion reports why a question cannot be asked: invalid UTF-8,
// nothing but blanks, or longer than maxRunes (<= 0: DefaultMaxQuestionRunes).
func CheckQuestion(q string, maxRunes int) error {
	if maxRunes <= 0 {
		maxRunes = DefaultMaxQuestionRunes
	}
	switch {
	case !utf8.ValidString(q):
		return ErrInvalidUTF8
	case strings.TrimSpace(q) == "":
		return ErrEmptyQuestion
	}
	if n := utf8.RuneCountInString(q); n > maxRunes {
		return fmt.Errorf("%w: %d characters, limit %d", ErrQuestionTooLong, n, maxRunes)
	}
	return nil
}

// CheckHistory reports a history that cannot be used: a role other than
// user or assistant, or content that is not valid UTF-8.
func CheckHistory(h []state.Message) error {
	for i, m := range h {
		switch m.Role {
		case state.RoleUser, state.RoleAssistant:
		default:
			return fmt.Errorf("%w: message %d has role %q (want user or assistant)", ErrInvalidHistory, i, m.Role)
		}
		if !utf8.ValidString(m.Content) {
			return fmt.Errorf("%w: message %d: %w", ErrInvalidHistory, i, ErrInvalidUTF8)
		}
	}
	return nil
}

// boundHistory keeps the most recent turns within the turn and character
// limits and reports how many earlier turns it dropped.
func boundHistory(h []state.Message, maxTurns, maxChars int) ([]state.Message, int) {
	keep := len(h)
	if keep > maxTurns {
		keep = maxTurns
	}
	chars := 0
	for i := len(h) - 1; i >= len(h)-keep; i-- {
		chars += utf8.RuneCountInString(h[i].Content)
		if chars > maxChars {
			keep = len(h) - 1 - i
			break
		}
	}
	return h[len(h)-keep:], len(h) - keep
}

// userTurns lists the content of the user's messages, oldest first.
func userTurns(h []state.Message) []string {
	var out []string
	for _, m := range h {
		if m.Role == state.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

func planQuery(s *state.RAG) plan.Query {
	return plan.Query{Text: s.Query.Text, History: userTurns(s.History), Source: s.Source, Coverage: s.Query.Shape.Coverage, FollowUp: s.Query.FollowUp}
}

// Decide is the first node. It checks the input (so that the compiled
// graph can be run directly on a bare state.RAG{Question: q}), fills
// Query.Text from the question when empty, bounds the history (keeping the
// most recent turns, with a warning naming what was dropped), and takes the
// decision: greetings, hand-offs, unsafe or out-of-scope questions and
// source mismatches get a fixed reply before any model or store is touched.
func (n *Nodes) Decide(ctx context.Context, s state.RAG) (state.RAG, error) {
	if err := CheckQuestion(s.Question, n.cfg.MaxQuestionRunes); err != nil {
		return s, err
	}
	if err := CheckHistory(s.History); err != nil {
		return s, err
	}
	if _, err := n.caller(ctx); err != nil {
		return s, err
	}
	s.Question = strings.TrimSpace(s.Question)
	if strings.TrimSpace(s.Query.Text) == "" {
		s.Query.Text = s.Question
	}
	if h, dropped := boundHistory(s.History, n.cfg.MaxHistoryTurns, n.cfg.MaxHistoryChars); dropped > 0 {
		s.History = h
		s.Warn(NodeDecide, state.KindInvalid, fmt.Errorf("history: kept the %d most recent turns, dropped the %d earliest (limits: %d turns, %d characters)",
			len(h), dropped, n.cfg.MaxHistoryTurns, n.cfg.MaxHistoryChars))
	}
	s.Decision = n.p.Planner.Decide(planQuery(&s))
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("adaptrag.decision.action", string(s.Decision.Action)),
		attribute.String("adaptrag.decision.reason", s.Decision.Reason))
	return s, nil
}

// RouteDecision is the router after NodeDecide: LabelDirect or LabelRetrieval.
func RouteDecision(s state.RAG) string {
	if s.Decision.Action == plan.ActionDirect {
		return LabelDirect
	}
	return LabelRetrieval
}

// Direct words the fixed reply of a direct-answer decision. A greeting is
// small talk, so its route is chitchat; other direct answers have no route.
func (n *Nodes) Direct(ctx context.Context, s state.RAG) (state.RAG, error) {
	s.Answer, s.AnsweredBy = n.directReply(ctx, s.Question, s.Decision), state.ByDirect
	if s.Decision.Reason == plan.ReasonGreeting {
		s.Route = state.Route{QueryType: router.Chitchat, Confidence: 1, Reason: "greeting", Classifier: "decision"}
	}
	return s, nil
}

// Classify profiles the question and applies the fallback policy. A
// classifier failure never fails the run: it becomes the analytical route
// with the cause recorded on the state and the span. The run's own
// cancellation is returned as an error, not taken for a classifier failure.
func (n *Nodes) Classify(ctx context.Context, s state.RAG) (state.RAG, error) {
	cctx, cancel := withTimeout(ctx, n.cfg.ClassifyTimeout)
	defer cancel()
	start := time.Now()
	res, err := classify(cctx, n.p.Classifier, s.Query.Text)
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	d := n.cfg.Policy.Decide(res.Profile, err)
	s.Route = state.Route{QueryType: d.Route, Fallback: d.Fallback, Cause: d.Cause, Classifier: res.Source}
	if d.Profile != nil {
		s.Route.Complexity, s.Route.Confidence, s.Route.Reason = d.Profile.Complexity, d.Profile.Confidence, d.Profile.Reason
	}
	t := state.SubTask{Node: NodeClassify, Kind: "classify", Task: "classify " + res.Source, Input: s.Question, Query: s.Query.Text,
		Status: state.StatusOK, Took: time.Since(start)}
	if err != nil {
		s.Warn(NodeClassify, KindOf(err), err)
		t.Status, t.Err = state.StatusFallback, err.Error()
		if KindOf(err) == state.KindTimeout {
			t.Status = state.StatusTimeout
		}
	}
	if res.LLMErr != nil {
		s.Warn(NodeClassify, KindOf(res.LLMErr), fmt.Errorf("kept the offline profile: %w", res.LLMErr))
	}
	s.Log(t)
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(
		attribute.String("adaptrag.route", string(d.Route)),
		attribute.Bool("adaptrag.route.fallback", d.Fallback),
		attribute.Float64("adaptrag.route.confidence", s.Route.Confidence),
		attribute.String("adaptrag.classifier", res.Source))
	if d.Fallback {
		span.SetAttributes(attribute.String("adaptrag.route.cause", d.Cause))
	}
	return s, nil
}

func classify(ctx context.Context, c router.Classifier, q string) (router.Result, error) {
	if uc, ok := c.(router.UsageClassifier); ok {
		return uc.ClassifyWithUsage(ctx, q)
	}
	p, err := c.Classify(ctx, q)
	return router.Result{Profile: p, Source: "custom"}, err
}

// RouteProfile is the router after NodeClassify: the route's query type.
func RouteProfile(s state.RAG) string { return string(s.Route.QueryType) }

// Plan classifies the intent and builds the retrieval plan: the rule table
// with the route as its last stage (see package plan). The run reads every
// field of the plan.
func (n *Nodes) Plan(ctx context.Context, s state.RAG) (state.RAG, error) {
	q := planQuery(&s)
	intent := n.p.Planner.ClassifyIntent(q)
	pl := n.p.Planner.Plan(q, intent, s.Route.QueryType)
	if s.Adjust != (plan.PlanPatch{}) {
		pl = pl.With(s.Adjust, "caller")
	}
	s.Intent, s.Plan = &intent, &pl
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("adaptrag.intent", intent.Intent),
		attribute.String("adaptrag.plan.reason", pl.Reason),
		attribute.String("adaptrag.plan.mode", string(pl.Mode)),
		attribute.Int("adaptrag.plan.doc_top_k", pl.DocTopK),
		attribute.Int("adaptrag.plan.final_context_top_n", pl.FinalContextTopN))
	return s, nil
}
