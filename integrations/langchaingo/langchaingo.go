// Package langchaingo plugs a pipeline into github.com/tmc/langchaingo
// agents and chains: Tool is a tools.Tool that asks the pipeline (an
// answer with its citations), and Retriever is a schema.Retriever that
// returns the passages of adaptive retrieval as schema.Documents.
//
//	tool := langchaingo.NewTool(pipe, langchaingo.ToolConfig{})
//	agent := agents.NewOneShotAgent(model, []tools.Tool{tool})
//	out, err := chains.Run(langchaingo.WithCaller(ctx, caller), agents.NewExecutor(agent), question)
//
// The tenant and actor come from the application, never from the model:
// from the context of the call (WithCaller, set by the application's
// request handler after authentication) or, when the context has none,
// from the constructor's config.
package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/plan"
)

// Caller is who a call acts for (see adaptrag.Caller): the tenant whose
// documents it may read and the actor look-ups check, from the caller's
// authentication, never from a model.
type Caller = adaptrag.Caller

// WithCaller returns a context that acts for c (adaptrag.WithCaller).
func WithCaller(ctx context.Context, c Caller) context.Context { return adaptrag.WithCaller(ctx, c) }

// CallerFrom returns the caller WithCaller put in ctx (adaptrag.CallerFrom).
func CallerFrom(ctx context.Context) (Caller, bool) { return adaptrag.CallerFrom(ctx) }

func callerOf(ctx context.Context, fallback Caller) Caller {
	if c, ok := CallerFrom(ctx); ok {
		return c
	}
	return fallback
}

// Default name and description of Tool.
const (
	DefaultToolName        = "knowledge_base"
	DefaultToolDescription = "Answers a question from the company knowledge base (policies, procedures, products) " +
		"and cites the documents it used as [n]. Input: the question as plain text, in the user's own words and language. " +
		"Output: the answer followed by its sources."
)

// ToolConfig configures NewTool. The zero value is a tool named
// DefaultToolName acting for the default tenant.
type ToolConfig struct {
	// Name and Description are what the agent's model sees; "" takes the
	// defaults.
	Name, Description string
	// Caller is who calls act for when their context has no caller.
	Caller Caller
	// Source restricts retrieval to one source of the knowledge base.
	Source string
}

// Tool asks the pipeline. It implements tools.Tool and is safe for
// concurrent use.
type Tool struct {
	pipe *adaptrag.Pipeline
	cfg  ToolConfig
}

var _ tools.Tool = (*Tool)(nil)

// NewTool returns a tool asking p.
func NewTool(p *adaptrag.Pipeline, c ToolConfig) *Tool {
	if c.Name == "" {
		c.Name = DefaultToolName
	}
	if c.Description == "" {
		c.Description = DefaultToolDescription
	}
	return &Tool{pipe: p, cfg: c}
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return t.cfg.Name }

// Description implements tools.Tool.
func (t *Tool) Description() string { return t.cfg.Description }

// Call implements tools.Tool: it asks the question and returns the answer
// followed by its sources, one per line ("[1] origin — locator"). A
// question the pipeline refuses (empty, too long, not UTF-8) comes back as
// an observation the model can act on, not as an error, so that the agent
// can correct itself; other failures are errors.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	q := cleanInput(input)
	c := callerOf(ctx, t.cfg.Caller)
	res, err := t.pipe.Ask(ctx, adaptrag.Request{Question: q, Source: t.cfg.Source, Scope: c.Scope, Actor: c.Actor})
	if err != nil {
		if refused(err) {
			return "The knowledge base cannot take this input: " + err.Error() + ". Give the question as plain text.", nil
		}
		return "", fmt.Errorf("%s: %w", t.cfg.Name, err)
	}
	return AnswerText(res), nil
}

// AnswerText is the text Tool returns for a result: the answer, then
// "Sources:" and one line per citation.
func AnswerText(res *adaptrag.Result) string {
	var b strings.Builder
	b.WriteString(res.Answer)
	if len(res.Citations) > 0 {
		b.WriteString("\n\nSources:")
		for _, c := range res.Citations {
			fmt.Fprintf(&b, "\n[%d] %s", c.N, c.Origin)
			if c.Locator != "" {
				fmt.Fprintf(&b, " — %s", c.Locator)
			}
		}
	}
	return b.String()
}

// cleanInput undoes what ReAct models wrap an action input in: spaces,
// quotes, a trailing newline.
func cleanInput(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

func refused(err error) bool {
	for _, e := range []error{adaptrag.ErrEmptyQuestion, adaptrag.ErrQuestionTooLong, adaptrag.ErrInvalidUTF8, adaptrag.ErrInvalidHistory} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// RetrieverConfig configures NewRetriever. The zero value returns the
// plan's passages for the default tenant.
type RetrieverConfig struct {
	// K is how many documents to return; 0 takes the plan's number.
	K int
	// Mode forces dense or hybrid retrieval; "" lets the router choose.
	Mode plan.Mode
	// Source restricts retrieval to one source of the knowledge base.
	Source string
	// Caller is who calls act for when their context has no caller.
	Caller Caller
}

// Retriever returns the passages adaptive retrieval finds for a query. It
// implements schema.Retriever and is safe for concurrent use.
type Retriever struct {
	pipe *adaptrag.Pipeline
	cfg  RetrieverConfig
}

var _ schema.Retriever = (*Retriever)(nil)

// NewRetriever returns a retriever searching p.
func NewRetriever(p *adaptrag.Pipeline, c RetrieverConfig) *Retriever {
	return &Retriever{pipe: p, cfg: c}
}

// Metadata keys of the documents Retriever returns.
const (
	MetaOrigin     = "origin"     // string: the file or URL the passage came from
	MetaLocator    = "locator"    // string: where in it (heading path, row, record id)
	MetaRelevance  = "relevance"  // float64: calibrated relevance, 0..1
	MetaRoute      = "route"      // string: the route of the query (chitchat, factual, analytical)
	MetaTitle      = "title"      // string
	MetaSource     = "source"     // string
	MetaMethod     = "method"     // string: dense, bm25, hybrid, rerank
	MetaScore      = "score"      // float64: the method's own score
	MetaID         = "id"         // string: the chunk id
	MetaCollection = "collection" // string: docs or faq
	MetaRank       = "n"          // int: 1-based rank
	MetaTraceID    = "trace_id"   // string: the run's trace
)

// GetRelevantDocuments implements schema.Retriever: the passages, best
// first, with PageContent the passage text, Score its relevance and
// Metadata the Meta* keys. A small-talk query retrieves nothing: an empty
// result with a nil error.
func (r *Retriever) GetRelevantDocuments(ctx context.Context, query string) ([]schema.Document, error) {
	c := callerOf(ctx, r.cfg.Caller)
	res, err := r.pipe.Search(ctx, adaptrag.SearchRequest{Query: query, K: r.cfg.K, Mode: r.cfg.Mode, Source: r.cfg.Source,
		Scope: c.Scope, Actor: c.Actor})
	if err != nil {
		return nil, fmt.Errorf("adaptrag retriever: %w", err)
	}
	docs := make([]schema.Document, 0, len(res.Docs))
	for _, p := range res.Docs {
		docs = append(docs, schema.Document{PageContent: p.Text, Score: float32(p.Relevance), Metadata: map[string]any{
			MetaOrigin: p.Origin, MetaLocator: p.Locator, MetaRelevance: p.Relevance, MetaRoute: string(res.Route.QueryType),
			MetaTitle: p.Title, MetaSource: p.Source, MetaMethod: string(p.Method), MetaScore: p.Score, MetaID: p.ID,
			MetaCollection: p.Collection, MetaRank: p.N, MetaTraceID: res.TraceID,
		}})
	}
	return docs, nil
}
