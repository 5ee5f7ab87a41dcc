package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
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
	Thread   string `json:"thread,omitempty" jsonschema:"keep the conversation in this thread: its earlier turns are the history and the answer is added to it; do not send history with it"`
}

// SearchInput are the arguments of the search tool.
type SearchInput struct {
	Query   string `json:"query" jsonschema:"what to look for, in the user's words"`
	K       int    `json:"k,omitempty" jsonschema:"how many passages to return; omit for the plan's number"`
	Mode    string `json:"mode,omitempty" jsonschema:"dense (semantic similarity) or hybrid (semantic + keyword, reranked); omit to let the router choose"`
	Source  string `json:"source,omitempty" jsonschema:"restrict the search to one source of the knowledge base (see the sources tool); omit to search all"`
	History []Turn `json:"history,omitempty" jsonschema:"earlier turns of the conversation, oldest first, so that a follow-up query (it, that one) can be resolved"`
	Thread  string `json:"thread,omitempty" jsonschema:"resolve a follow-up query against this thread's turns (the search adds none); do not send history with it"`
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
	out, err := ResponseSchema()
	if err != nil {
		return fmt.Errorf("mcpserver: output schema: %w", err)
	}
	minLen := 1
	askIn.Properties["question"].MinLength = &minLen
	askIn.Properties["question"].MaxLength = ptr(s.cfg.MaxQuestionRunes)
	askIn.Properties["source"].MaxLength = ptr(maxIDRunes)
	askIn.Properties["thread"].MaxLength = ptr(maxThreadRunes)
	s.limitHistory(askIn.Properties["history"])
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolAsk,
		Title: "Ask the knowledge base",
		Description: "Answer a question from the knowledge base. The question is routed (small talk, factual, analytical), " +
			"the matching passages are retrieved and an answer is written that cites them as [n]. " +
			"Returns adaptrag's v1 response: the answer, its citations and the passages they cite, each with its id (for fetch), document (origin), place (locator), relevance and text, the route and the plan. " +
			"If the knowledge base does not cover the question, the answer says so rather than guessing.",
		InputSchema:  askIn,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.ask)

	searchIn, err := schemaOf[SearchInput]()
	if err != nil {
		return fmt.Errorf("mcpserver: search schema: %w", err)
	}
	searchIn.Properties["query"].MinLength = &minLen
	searchIn.Properties["query"].MaxLength = ptr(s.cfg.MaxQuestionRunes)
	searchIn.Properties["source"].MaxLength = ptr(maxIDRunes)
	searchIn.Properties["thread"].MaxLength = ptr(maxThreadRunes)
	s.limitHistory(searchIn.Properties["history"])
	one, maxK := 1.0, float64(s.cfg.MaxK)
	searchIn.Properties["k"].Minimum, searchIn.Properties["k"].Maximum = &one, &maxK
	searchIn.Properties["mode"].Enum = []any{string(plan.ModeDense), string(plan.ModeHybrid)}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolSearch,
		Title: "Search the knowledge base",
		Description: fmt.Sprintf("Find the passages of the knowledge base that answer a query, without writing an answer. "+
			"Returns adaptrag's v1 response with up to k (1 to %d) passages, best first, each with its id (for fetch), document (origin), place (locator), relevance (0 to 1) and text. "+
			"Use it to write your own answer or to check a claim; use ask for a ready answer.", s.cfg.MaxK),
		InputSchema:  searchIn,
		OutputSchema: out,
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

// ResponseSchema is the output schema of the ask and search tools: the
// v1 response (api.Schema(api.SchemaResponse)) with the response's own
// definition at the root, as MCP wants an object schema there, and every
// v1 definition under $defs. It has no "$schema" (clients validate it with
// their own draft 2020-12 validator) and no type that lists "null".
func ResponseSchema() (*jsonschema.Schema, error) {
	b, err := api.Schema(api.SchemaResponse)
	if err != nil {
		return nil, err
	}
	var doc jsonschema.Schema
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("api schema: %w", err)
	}
	def, ok := doc.Defs["Response"]
	if !ok {
		return nil, errors.New("api schema: no Response definition")
	}
	root := def.CloneSchemas()
	root.Defs = doc.Defs
	for _, d := range root.Defs {
		portable(d)
	}
	portable(root)
	return root, nil
}

// maxThreadRunes is the longest thread id (adaptrag.ErrInvalidThread).
const maxThreadRunes = 128

// threadOf is the thread a call runs on: the thread argument; else, when
// the pipeline keeps threads and the call sends no history, its session's
// thread (sessionThread); else none. A thread argument on a pipeline
// without threads is an invalid argument the model can act on.
func (s *Server) threadOf(req *mcp.CallToolRequest, arg string, history int) (string, error) {
	if arg != "" {
		if !s.pipe.HasThreads() {
			return "", fmt.Errorf("%w: thread %q: this server keeps no threads (it was started without a thread store); "+
				"omit thread and pass the earlier turns as history", ErrInvalidArgument, arg)
		}
		if history > 0 {
			return "", fmt.Errorf("%w: a call on a thread takes its history from the thread: send thread or history, not both", ErrInvalidArgument)
		}
		return arg, nil
	}
	if history > 0 || !s.pipe.HasThreads() || req == nil {
		return "", nil
	}
	return s.sessionThread(req.Session), nil
}

// threadError makes the pipeline's refusals of a thread invalid arguments.
func threadError(err error) error {
	if errors.Is(err, adaptrag.ErrNoThreads) || errors.Is(err, adaptrag.ErrThreadHistory) || errors.Is(err, adaptrag.ErrInvalidThread) {
		return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return err
}

// ask runs the ask tool. Every error becomes a tool result with isError.
func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, api.Response, error) {
	if err := s.checkText("question", in.Question); err != nil {
		return nil, api.Response{}, err
	}
	hist, err := s.history(in.History)
	if err != nil {
		return nil, api.Response{}, err
	}
	thread, err := s.threadOf(req, in.Thread, len(hist))
	if err != nil {
		return nil, api.Response{}, err
	}
	c := s.caller(ctx)
	if in.Thread == "" && thread != "" {
		s.usedSessionThread(req.Session, c.Scope)
	}
	res, err := s.pipe.Ask(ctx, adaptrag.Request{Question: in.Question, History: hist, Source: in.Source, Scope: c.Scope, Actor: c.Actor, Thread: thread})
	if err != nil {
		return nil, api.Response{}, fmt.Errorf("ask: %w", threadError(err))
	}
	out := res.V1()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: AskText(out)}}}, out, nil
}

// AskText is the readable form of an ask result: the answer, then one line
// per citation ("[1] origin — locator", and the passage's id for fetch).
func AskText(out api.Response) string {
	var b strings.Builder
	b.WriteString(out.Answer)
	if len(out.Citations) > 0 {
		b.WriteString("\n\nSources:")
		for _, c := range out.Citations {
			fmt.Fprintf(&b, "\n[%d] %s", c.N, c.Origin)
			if c.Locator != "" {
				fmt.Fprintf(&b, " — %s", c.Locator)
			}
			if c.ID != "" {
				fmt.Fprintf(&b, " (id %s)", c.ID)
			}
		}
	}
	return b.String()
}

// search runs the search tool.
func (s *Server) search(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, api.Response, error) {
	if err := s.checkText("query", in.Query); err != nil {
		return nil, api.Response{}, err
	}
	hist, err := s.history(in.History)
	if err != nil {
		return nil, api.Response{}, err
	}
	if in.K < 0 || in.K > s.cfg.MaxK {
		return nil, api.Response{}, fmt.Errorf("%w: k = %d (want 1 to %d)", ErrInvalidArgument, in.K, s.cfg.MaxK)
	}
	mode := plan.Mode(in.Mode)
	switch mode {
	case "", plan.ModeDense, plan.ModeHybrid:
	default:
		return nil, api.Response{}, fmt.Errorf("%w: mode %q (want dense or hybrid)", ErrInvalidArgument, in.Mode)
	}
	thread, err := s.threadOf(req, in.Thread, len(hist))
	if err != nil {
		return nil, api.Response{}, err
	}
	c := s.caller(ctx)
	res, err := s.pipe.Search(ctx, adaptrag.SearchRequest{Query: in.Query, History: hist, Source: in.Source,
		K: in.K, Mode: mode, Scope: c.Scope, Actor: c.Actor, Thread: thread})
	if err != nil {
		if errors.Is(err, retrieval.ErrInvalid) {
			return nil, api.Response{}, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
		return nil, api.Response{}, fmt.Errorf("search: %w", threadError(err))
	}
	out := res.V1()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: SearchText(out)}}}, out, nil
}

// SearchText is the readable form of a search result: one block per
// passage, headed "[n] origin — locator (relevance r, id ID)".
func SearchText(out api.Response) string {
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
