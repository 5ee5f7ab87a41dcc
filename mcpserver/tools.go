package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/retrieval"
)

// ErrInvalidArgument reports a tool argument the server refuses; the tool
// result carries it with isError set.
var ErrInvalidArgument = errors.New("mcpserver: invalid argument")

// Turn is one earlier turn of the conversation.
type Turn struct {
	Role    string `json:"role" jsonschema:"who spoke: user or assistant"`
	Content string `json:"content" jsonschema:"what was said"`
}

// AskInput are the arguments of the ask tool.
type AskInput struct {
	Question string `json:"question" jsonschema:"the question, in the user's own words and language"`
	History  []Turn `json:"history,omitempty" jsonschema:"earlier turns of the conversation, oldest first, so that a follow-up question (it, that one) can be resolved"`
	Source   string `json:"source,omitempty" jsonschema:"restrict retrieval to one source of the knowledge base; omit to search all"`
}

// Citation is one passage an answer cites, as [N] in its text.
type Citation struct {
	N         int     `json:"n" jsonschema:"the [n] marker in the answer"`
	ID        string  `json:"id" jsonschema:"the passage's id: pass it to fetch for the passage, its uri for the whole document"`
	Origin    string  `json:"origin" jsonschema:"the document: a file path relative to the knowledge base, or a URL"`
	Locator   string  `json:"locator,omitempty" jsonschema:"where in the document: heading path, row or record id"`
	Title     string  `json:"title,omitempty" jsonschema:"the document's title"`
	Source    string  `json:"source,omitempty" jsonschema:"the source (category) of the document"`
	URI       string  `json:"uri,omitempty" jsonschema:"the resource to read the whole document"`
	Relevance float64 `json:"relevance" jsonschema:"estimated relevance to the question, 0 to 1"`
	Text      string  `json:"text" jsonschema:"the passage"`
}

// AskOutput is the structured result of the ask tool.
type AskOutput struct {
	Answer     string     `json:"answer" jsonschema:"the answer, with [n] markers for its citations"`
	AnsweredBy string     `json:"answered_by" jsonschema:"what wrote the answer: generate (the model), extractive, faq, chitchat, direct or not_found"`
	Route      string     `json:"route" jsonschema:"how the question was routed: chitchat, factual or analytical"`
	Citations  []Citation `json:"citations" jsonschema:"the passages the answer cites"`
	Warnings   []string   `json:"warnings,omitempty" jsonschema:"steps that degraded without failing the run"`
	TraceID    string     `json:"trace_id,omitempty" jsonschema:"the OpenTelemetry trace of the run"`
}

// SearchInput are the arguments of the search tool.
type SearchInput struct {
	Query   string `json:"query" jsonschema:"what to look for, in the user's words"`
	K       int    `json:"k,omitempty" jsonschema:"how many passages to return; omit for the plan's number"`
	Mode    string `json:"mode,omitempty" jsonschema:"dense (semantic similarity) or hybrid (semantic + keyword, reranked); omit to let the router choose"`
	Source  string `json:"source,omitempty" jsonschema:"restrict the search to one source of the knowledge base (see the sources tool); omit to search all"`
	History []Turn `json:"history,omitempty" jsonschema:"earlier turns of the conversation, oldest first, so that a follow-up query (it, that one) can be resolved"`
}

// Passage is one passage found by search.
type Passage struct {
	N         int     `json:"n" jsonschema:"rank, best first"`
	ID        string  `json:"id" jsonschema:"the passage's id: pass it to fetch for the passage, its uri for the whole document"`
	Origin    string  `json:"origin" jsonschema:"the document: a file path relative to the knowledge base, or a URL"`
	Locator   string  `json:"locator,omitempty" jsonschema:"where in the document: heading path, row or record id"`
	Title     string  `json:"title,omitempty" jsonschema:"the document's title"`
	Source    string  `json:"source,omitempty" jsonschema:"the source (category) of the document"`
	URI       string  `json:"uri,omitempty" jsonschema:"the resource to read the whole document"`
	Relevance float64 `json:"relevance" jsonschema:"estimated relevance to the query, 0 to 1"`
	Method    string  `json:"method" jsonschema:"what found it: dense, bm25, hybrid, rerank"`
	Text      string  `json:"text" jsonschema:"the passage"`
}

// SearchOutput is the structured result of the search tool.
type SearchOutput struct {
	Route    string    `json:"route" jsonschema:"how the query was routed: chitchat, factual or analytical"`
	Passages []Passage `json:"passages" jsonschema:"the passages, best first"`
	TraceID  string    `json:"trace_id,omitempty" jsonschema:"the OpenTelemetry trace of the run"`
}

// Tool names.
const (
	ToolAsk     = "ask"
	ToolSearch  = "search"
	ToolFetch   = "fetch"
	ToolSources = "sources"
)

// limitHistory sets the bounds of a history property: at most
// MaxHistoryTurns turns of user or assistant, each at most MaxTurnRunes.
func (s *Server) limitHistory(h *jsonschema.Schema) {
	h.MaxItems = ptr(s.cfg.MaxHistoryTurns)
	h.Items.Properties["role"].Enum = []any{string(adaptrag.RoleUser), string(adaptrag.RoleAssistant)}
	h.Items.Properties["content"].MaxLength = ptr(s.cfg.MaxTurnRunes)
}

// history checks the history argument and converts it.
func (s *Server) history(in []Turn) ([]adaptrag.Message, error) {
	if len(in) > s.cfg.MaxHistoryTurns {
		return nil, fmt.Errorf("%w: history has %d turns (at most %d)", ErrInvalidArgument, len(in), s.cfg.MaxHistoryTurns)
	}
	hist := make([]adaptrag.Message, 0, len(in))
	for i, t := range in {
		role := t.Role
		if role != adaptrag.RoleUser && role != adaptrag.RoleAssistant {
			return nil, fmt.Errorf("%w: history[%d].role %q (want user or assistant)", ErrInvalidArgument, i, t.Role)
		}
		if n := utf8.RuneCountInString(t.Content); n > s.cfg.MaxTurnRunes {
			return nil, fmt.Errorf("%w: history[%d].content has %d characters (at most %d)", ErrInvalidArgument, i, n, s.cfg.MaxTurnRunes)
		}
		hist = append(hist, adaptrag.Message{Role: role, Content: t.Content})
	}
	return hist, nil
}

// checkText refuses an empty or overlong question or query.
func (s *Server) checkText(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalidArgument, name)
	}
	if n := utf8.RuneCountInString(v); n > s.cfg.MaxQuestionRunes {
		return fmt.Errorf("%w: %s has %d characters (at most %d)", ErrInvalidArgument, name, n, s.cfg.MaxQuestionRunes)
	}
	return nil
}

func (s *Server) addTools() error {
	askIn, err := schemaOf[AskInput]()
	if err != nil {
		return fmt.Errorf("mcpserver: ask schema: %w", err)
	}
	askOut, err := schemaOf[AskOutput]()
	if err != nil {
		return fmt.Errorf("mcpserver: ask schema: %w", err)
	}
	minLen := 1
	askIn.Properties["question"].MinLength = &minLen
	askIn.Properties["question"].MaxLength = ptr(s.cfg.MaxQuestionRunes)
	askIn.Properties["source"].MaxLength = ptr(maxIDRunes)
	s.limitHistory(askIn.Properties["history"])
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolAsk,
		Title: "Ask the knowledge base",
		Description: "Answer a question from the knowledge base. The question is routed (small talk, factual, analytical), " +
			"the matching passages are retrieved and an answer is written that cites them as [n]. " +
			"Returns the answer, the route and each citation with its document (origin), place (locator), relevance and text. " +
			"If the knowledge base does not cover the question, the answer says so rather than guessing.",
		InputSchema:  askIn,
		OutputSchema: askOut,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.ask)

	searchIn, err := schemaOf[SearchInput]()
	if err != nil {
		return fmt.Errorf("mcpserver: search schema: %w", err)
	}
	searchOut, err := schemaOf[SearchOutput]()
	if err != nil {
		return fmt.Errorf("mcpserver: search schema: %w", err)
	}
	searchIn.Properties["query"].MinLength = &minLen
	searchIn.Properties["query"].MaxLength = ptr(s.cfg.MaxQuestionRunes)
	searchIn.Properties["source"].MaxLength = ptr(maxIDRunes)
	s.limitHistory(searchIn.Properties["history"])
	one, maxK := 1.0, float64(s.cfg.MaxK)
	searchIn.Properties["k"].Minimum, searchIn.Properties["k"].Maximum = &one, &maxK
	searchIn.Properties["mode"].Enum = []any{string(plan.ModeDense), string(plan.ModeHybrid)}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolSearch,
		Title: "Search the knowledge base",
		Description: fmt.Sprintf("Find the passages of the knowledge base that answer a query, without writing an answer. "+
			"Returns up to k (1 to %d) passages, best first, each with its document (origin), place (locator), relevance (0 to 1) and text. "+
			"Use it to write your own answer or to check a claim; use ask for a ready answer.", s.cfg.MaxK),
		InputSchema:  searchIn,
		OutputSchema: searchOut,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.search)
	return s.addKBTools()
}

func ptr[T any](v T) *T { return &v }

// schemaOf is the JSON Schema of T, made portable: a property the Go
// type allows to be null (a slice) gets the single type its JSON values
// have, as the server never sends null for it and a client that maps
// schemas onto a single-type dialect would drop it.
func schemaOf[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	portable(s)
	return s, nil
}

func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		for _, t := range s.Types {
			if t != "null" {
				s.Type = t
			}
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		portable(p)
	}
	portable(s.Items)
}

// ask runs the ask tool. Every error becomes a tool result with isError.
func (s *Server) ask(ctx context.Context, _ *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, AskOutput, error) {
	if err := s.checkText("question", in.Question); err != nil {
		return nil, AskOutput{}, err
	}
	hist, err := s.history(in.History)
	if err != nil {
		return nil, AskOutput{}, err
	}
	c := s.caller(ctx)
	res, err := s.pipe.Ask(ctx, adaptrag.Request{Question: in.Question, History: hist, Source: in.Source, Scope: c.Scope, Actor: c.Actor})
	if err != nil {
		return nil, AskOutput{}, fmt.Errorf("ask: %w", err)
	}
	out := AskOutput{Answer: res.Answer, AnsweredBy: string(res.AnsweredBy), Route: string(res.Route.QueryType),
		Citations: []Citation{}, TraceID: res.TraceID}
	byN := map[int]adaptrag.Passage{}
	for _, p := range res.Docs {
		byN[p.N] = p
	}
	for _, ci := range res.Citations {
		p := byN[ci.N]
		out.Citations = append(out.Citations, Citation{N: ci.N, ID: p.ID, Origin: ci.Origin, Locator: ci.Locator, Title: ci.Title, Source: ci.Source,
			URI: resourceURI(ci.Collection, ci.Origin), Relevance: p.Relevance, Text: p.Text})
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, w.Node+": "+w.Message)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: AskText(out)}}}, out, nil
}

// AskText is the readable form of an ask result: the answer, then one line
// per citation ("[1] origin — locator").
func AskText(out AskOutput) string {
	var b strings.Builder
	b.WriteString(out.Answer)
	if len(out.Citations) > 0 {
		b.WriteString("\n\nSources:")
		for _, c := range out.Citations {
			fmt.Fprintf(&b, "\n[%d] %s", c.N, c.Origin)
			if c.Locator != "" {
				fmt.Fprintf(&b, " — %s", c.Locator)
			}
		}
	}
	return b.String()
}

// search runs the search tool.
func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	if err := s.checkText("query", in.Query); err != nil {
		return nil, SearchOutput{}, err
	}
	hist, err := s.history(in.History)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	if in.K < 0 || in.K > s.cfg.MaxK {
		return nil, SearchOutput{}, fmt.Errorf("%w: k = %d (want 1 to %d)", ErrInvalidArgument, in.K, s.cfg.MaxK)
	}
	mode := plan.Mode(in.Mode)
	switch mode {
	case "", plan.ModeDense, plan.ModeHybrid:
	default:
		return nil, SearchOutput{}, fmt.Errorf("%w: mode %q (want dense or hybrid)", ErrInvalidArgument, in.Mode)
	}
	c := s.caller(ctx)
	res, err := s.pipe.Search(ctx, adaptrag.SearchRequest{Query: in.Query, History: hist, Source: in.Source,
		K: in.K, Mode: mode, Scope: c.Scope, Actor: c.Actor})
	if err != nil {
		if errors.Is(err, retrieval.ErrInvalid) {
			return nil, SearchOutput{}, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
		return nil, SearchOutput{}, fmt.Errorf("search: %w", err)
	}
	out := SearchOutput{Route: string(res.Route.QueryType), Passages: []Passage{}, TraceID: res.TraceID}
	for _, p := range res.Docs {
		out.Passages = append(out.Passages, Passage{N: p.N, ID: p.ID, Origin: p.Origin, Locator: p.Locator, Title: p.Title, Source: p.Source,
			URI: resourceURI(p.Collection, p.Origin), Relevance: p.Relevance, Method: string(p.Method), Text: p.Text})
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: SearchText(out)}}}, out, nil
}

// SearchText is the readable form of a search result: one block per
// passage, headed "[n] origin — locator (relevance r)".
func SearchText(out SearchOutput) string {
	if len(out.Passages) == 0 {
		return "No passage of the knowledge base matches."
	}
	var b strings.Builder
	for i, p := range out.Passages {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%d] %s", p.N, p.Origin)
		if p.Locator != "" {
			fmt.Fprintf(&b, " — %s", p.Locator)
		}
		fmt.Fprintf(&b, " (relevance %.2f", p.Relevance)
		if p.ID != "" {
			fmt.Fprintf(&b, ", id %s", p.ID)
		}
		fmt.Fprintf(&b, ")\n%s", p.Text)
	}
	return b.String()
}

// moduleVersion is this module's version in the running binary.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if bi.Main.Path == "github.com/adaptrag/adaptrag" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/adaptrag/adaptrag" {
			return d.Version
		}
	}
	return "devel"
}
