// Package mcpserver serves a pipeline to agents over the Model Context
// Protocol (MCP), with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// The server offers two tools and the knowledge base's documents:
//
//	ask     answer a question from the knowledge base, with citations
//	search  the passages an answer would use (k, mode dense|hybrid), no answer
//	adaptrag://docs/{origin}  a document's stored passages, in order
//	adaptrag://faq/{origin}   an FAQ file's entries, in order
//
// The tenant and the actor never come from a tool argument: no tool has
// such an argument, and an unknown argument is refused. They come from the
// session: over stdio from Config.Caller (the command's flags), over HTTP
// from each request, after the host's own authentication (the CallerFunc
// passed to Server.Handler, or the host middleware's WithCaller).
//
//	srv, err := mcpserver.New(pipe, mcpserver.Config{KB: kb})
//	mux.Handle("/mcp", auth(srv.Handler(callerOf)))  // streamable HTTP
//	err = srv.Run(ctx, &mcp.StdioTransport{})         // or stdio
//
// The ask and search tools return version 1 of adaptrag's wire format
// (api.Response, the body of the HTTP service's /v1/ask), with the output
// schema ResponseSchema.
//
// Threads: on a pipeline with a thread store (adaptrag.Options.Threads),
// a call with a thread argument runs on that thread of the caller's
// tenant (ask adds its turn; search reads the turns). A call with neither
// thread nor history runs on its session's default thread: one per
// session Run serves (stdio), and one per session id for a stateful
// streamable-HTTP session the host connects to MCP(). Handler is
// stateless, so over it only the thread argument applies. A call with
// history and no thread uses that history and no thread. On a pipeline
// without a thread store, a thread argument is an invalid argument. The
// default thread of a session Run serves is deleted from the store when
// the session ends: its id was drawn at random, so nothing could continue
// it (a session-id thread of an HTTP session, and every named thread,
// stays until deleted).
//
// A bad argument (an empty question, k out of range, an unknown mode) is a
// tool result with isError set, which the agent reads and can correct; it is
// never a protocol error.
package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
)

// Caller is who a call acts for (see adaptrag.Caller): the tenant whose
// documents it may read and the actor look-ups check, from the caller's
// authentication, never from a model.
type Caller = adaptrag.Caller

// WithCaller returns a context that acts for c (adaptrag.WithCaller).
func WithCaller(ctx context.Context, c Caller) context.Context { return adaptrag.WithCaller(ctx, c) }

// CallerFrom returns the caller WithCaller put in ctx (adaptrag.CallerFrom).
func CallerFrom(ctx context.Context) (Caller, bool) { return adaptrag.CallerFrom(ctx) }

// CallerFunc maps an authenticated HTTP request to its caller. An error
// refuses the request with 401 Unauthorized.
type CallerFunc func(*http.Request) (Caller, error)

// Defaults of Config.
const (
	DefaultMaxK = 20
	// DefaultMaxQuestionRunes is the longest question or query the tools
	// take, in characters: the pipeline's own default limit.
	DefaultMaxQuestionRunes = 2000
	// DefaultMaxHistoryTurns and DefaultMaxTurnRunes bound the history
	// argument: how many earlier turns, and the characters of each.
	DefaultMaxHistoryTurns = 50
	DefaultMaxTurnRunes    = 8000
	// ResourceScheme is the URI scheme of the knowledge base's documents.
	ResourceScheme = "adaptrag"
)

// Config configures New. The zero value serves the pipeline without
// documents, for the default tenant.
type Config struct {
	// Name and Version identify the server to clients (defaults
	// "adaptrag" and the module's version).
	Name, Version string
	// KB lists and reads the documents served as resources; nil serves
	// none. Listing needs stores that implement retrieval.Lister.
	KB *kb.KB
	// Caller is who sessions act for when their context carries no caller
	// (WithCaller): a stdio session, or HTTP with a nil CallerFunc.
	Caller Caller
	// MaxK bounds the search tool's k (default DefaultMaxK).
	MaxK int
	// MaxQuestionRunes is the maxLength of a question or query, in
	// characters (default DefaultMaxQuestionRunes); set it to the
	// pipeline's Options.MaxQuestionRunes when that is not the default.
	MaxQuestionRunes int
	// MaxHistoryTurns and MaxTurnRunes bound the history argument
	// (defaults DefaultMaxHistoryTurns, DefaultMaxTurnRunes); beyond them
	// a call is refused as an invalid argument.
	MaxHistoryTurns, MaxTurnRunes int
	// Timeout bounds each tool call (zero: no limit of its own; a host's
	// Limits.Timeout may still apply).
	Timeout time.Duration
	// MaxBodyBytes bounds an HTTP request body (default
	// mcp.DefaultMaxRequestBodyBytes, 4 MiB); a host's Limits.MaxBodyBytes
	// takes precedence.
	MaxBodyBytes int64
	// Instructions tell the client's model what the server is for; ""
	// takes a default naming the tools.
	Instructions string
	// Logger logs server activity; nil logs nothing.
	Logger *slog.Logger
	// DisableLocalhostProtection lets Handler serve requests that arrive on
	// a loopback address with another Host header: set it when a reverse
	// proxy on the same machine forwards the public host name. Without a
	// proxy, leave it off (it stops DNS-rebinding attacks on a local
	// server).
	DisableLocalhostProtection bool
	// TracerProvider traces each MCP request as a server span
	// ("tools/call ask") that parents the pipeline's run; nil means the
	// global provider.
	TracerProvider trace.TracerProvider
}

// Server is the MCP server of a pipeline. It is safe for concurrent use by
// any number of sessions.
type Server struct {
	pipe   *adaptrag.Pipeline
	cfg    Config
	mcp    *mcp.Server
	tracer trace.Tracer
	calls  calls
	// sessions are the default threads of the sessions Run serves, by
	// *mcp.ServerSession.
	sessions sync.Map
}

const defaultInstructions = `Answers questions from a knowledge base with adaptive retrieval-augmented generation.
Use "ask" for an answer with numbered citations [n] to the passages it rests on; pass earlier turns as history for follow-up questions.
Use "search" for the passages alone, when you will write the answer yourself.
The documents are resources (adaptrag://docs/...): read one to see its passages in order.`

// New builds the server. It fails when p is nil.
func New(p *adaptrag.Pipeline, c Config) (*Server, error) {
	if p == nil {
		return nil, errors.New("mcpserver: nil pipeline")
	}
	if c.MaxK <= 0 {
		c.MaxK = DefaultMaxK
	}
	if c.MaxQuestionRunes <= 0 {
		c.MaxQuestionRunes = DefaultMaxQuestionRunes
	}
	if c.MaxHistoryTurns <= 0 {
		c.MaxHistoryTurns = DefaultMaxHistoryTurns
	}
	if c.MaxTurnRunes <= 0 {
		c.MaxTurnRunes = DefaultMaxTurnRunes
	}
	tp := c.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	s := &Server{pipe: p, cfg: c, tracer: tp.Tracer(ScopeName)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cmp.Or(c.Name, "adaptrag"), Title: "adaptrag knowledge base", Version: cmp.Or(c.Version, moduleVersion())},
		&mcp.ServerOptions{Instructions: cmp.Or(c.Instructions, defaultInstructions), Logger: c.Logger, SetCacheable: setCacheable})
	if err := s.addTools(); err != nil {
		return nil, err
	}
	if c.KB != nil {
		s.addResources()
	}
	// Each middleware added wraps those before it: guard, added last, is
	// the outermost, so that it recovers from a panic in any of them.
	s.mcp.AddReceivingMiddleware(s.describe, s.limit)
	s.mcp.AddReceivingMiddleware(s.trace)
	s.mcp.AddReceivingMiddleware(s.guard)
	return s, nil
}

// ScopeName is the instrumentation scope of the MCP request spans.
const ScopeName = "github.com/adaptrag/adaptrag/mcpserver"

// setCacheable marks the results that depend on the caller's tenant
// (the tool list, whose descriptions name the caller's documents, and a
// read document) private: no shared cache may serve them to another
// caller.
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ReadResourceRequest, *mcp.ListResourcesRequest:
		c.CacheScope = "private"
	}
}

// MCP returns the SDK server, to connect it to a transport of the host's
// own (mcp.Server.Connect) or to add more tools. Middleware added to it
// runs outside the server's own panic recovery.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session on t until the client disconnects or ctx is
// done: &mcp.StdioTransport{} for a desktop client. The session acts for
// Config.Caller unless ctx carries another (WithCaller). When the
// pipeline keeps threads, the session's calls without thread or history
// continue a thread of its own (see the package documentation).
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if err := s.serve(ctx, t); err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	return nil
}

// Handler returns the streamable-HTTP endpoint of the server, to mount at
// /mcp behind the host's authentication. Each request acts for, in order:
//
//   - the Caller callerOf returns for it (an error refuses the request
//     with 401), when callerOf is not nil;
//   - else the Caller the host's middleware put on the request's context
//     with WithCaller;
//   - else Config.Caller (a single-tenant deployment).
//
// The handler is stateless: each HTTP request stands alone (no
// Mcp-Session-Id), so a tenant is never carried over from an earlier
// request, and any replica can serve any request.
//
// Requests that arrive on a loopback address with a non-loopback Host
// header are refused with 403 (DNS-rebinding protection) unless the
// request is authenticated (callerOf is set, or the host's Limits say
// Authenticated) or Config.DisableLocalhostProtection is set.
//
// The Limits on a request's context (WithLimits) apply to it: a body
// larger than MaxBodyBytes gets 413, a tool call takes a run slot and is
// bounded by the timeout. A tool call is cancelled when its HTTP client
// disconnects, or when a notifications/cancelled from the same caller
// names its JSON-RPC id.
func (s *Server) Handler(callerOf CallerFunc) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.cfg.Logger,
			DisableLocalhostProtection: true}) // checked in serveHTTP, where authentication is known
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serveHTTP(h, callerOf, w, r)
	})
}

// caller is who a request acts for.
func (s *Server) caller(ctx context.Context) Caller {
	if c, ok := CallerFrom(ctx); ok {
		return c
	}
	return s.cfg.Caller
}
