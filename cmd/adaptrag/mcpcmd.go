package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
)

// runMCP serves the pipeline to one MCP client over stdin and stdout
// until the client disconnects. Nothing but the protocol goes to stdout;
// logs go to stderr. With --threads, the session keeps a thread of its
// own: calls without thread or history continue it.
func runMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mcp")
	clf := fs.String("classifier", "", "offline, llm or cascade (default: cascade with a model, offline without)")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "knowledge base: embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else the bundled sample)")
	rf := addRecordsFlags(fs)
	tenant := fs.String("tenant", "", "tenant every request of the session acts for")
	actor := fs.String("actor", "", "who the session asks as, for look-ups that check permissions")
	maxK := fs.Int("max-k", mcpserver.DefaultMaxK, "largest k the search tool accepts")
	timeout := fs.Duration("timeout", 0, "the longest a tool call may take (0: no limit)")
	threads := fs.String("threads", e.getenv("ADAPTRAG_THREADS"), `thread store for the tools' "thread" argument and the session's own thread: sqlite:PATH or postgres://… (default: $ADAPTRAG_THREADS; none: a thread argument is refused)`)
	verbose := fs.Bool("v", false, "log each request to stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: mcp takes no arguments, got %q", errUsage, pos)
	}
	if *maxK < 1 {
		return fmt.Errorf("%w: --max-k %d (want at least 1)", errUsage, *maxK)
	}
	if *timeout < 0 {
		return fmt.Errorf("%w: --timeout %s (want 0 or more)", errUsage, *timeout)
	}
	a, err := build(ctx, options{classifier: *clf, store: *store, records: rf, llm: llm.ConfigFromEnv(), threads: *threads})
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	srv, err := mcpserver.New(a.pipe, mcpserver.Config{
		KB:      a.kb,
		Caller:  mcpserver.Caller{Scope: retrieval.Scope{Tenant: *tenant}, Actor: *actor},
		MaxK:    *maxK,
		Timeout: *timeout,
		Logger:  slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		return err
	}
	// The OpenTelemetry GenAI instrumentations' switch for recording
	// prompts and completions on spans; off unless set.
	if on, _ := strconv.ParseBool(e.getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")); on {
		ctx = llm.WithContentCapture(ctx, true)
	}
	// Not the SDK's IOTransport: a line that is not a JSON-RPC message
	// gets an error reply instead of ending the session.
	err = srv.Run(ctx, &mcpserver.StdioTransport{Reader: os.Stdin, Writer: e.stdout})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil // the client went away or the user interrupted: a normal end
	}
	return err
}
