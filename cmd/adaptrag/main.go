// Command adaptrag runs adaptive retrieval-augmented question answering on a
// typed state graph. With nothing configured it works fully offline on the
// bundled sample handbook:
//
//	adaptrag ask "退货要在几天内发起？"
//	adaptrag ask --json "Compare travel claims and entertainment claims"
//	adaptrag ask --history "P-204 的保修期多久？" "P-205 呢？"
//	adaptrag graph --format mermaid
//	adaptrag plan --json "报销费用超过5000需要谁审批"
//	adaptrag ingest --store embedded:./kb docs/
//	adaptrag ls --store embedded:./kb
//	adaptrag repair --store embedded:./kb
//	adaptrag serve --addr 127.0.0.1:8080
//	adaptrag mcp
//	adaptrag eval retrieval|router|conversation --data ...
//	adaptrag bench cost
//
// Environment: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, OLLAMA_HOST
// select a model (none: offline); OPENAI_EMBEDDING_MODEL,
// OLLAMA_EMBEDDING_MODEL a remote embedder; ADAPTRAG_STORE the knowledge
// base (as --store); OTEL_EXPORTER_OTLP_ENDPOINT (and the other standard
// OTEL_* variables) an OTLP collector such as Jaeger.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// command is one subcommand, in the style of cmd/go.
type command struct {
	name, usage, short string
	run                func(ctx context.Context, env *env, args []string) error
}

// env is what commands write to; tests swap the streams.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// errUsage marks a usage error (exit status 2).
var errUsage = errors.New("usage")

func commands() []command {
	return []command{
		{"ask", "ask [--history [ROLE:]TEXT]... [--history-file FILE] [--classifier offline|llm|cascade] [--store LOC] [--source S] [--tenant T] [--actor A] [--json] QUESTION", "answer a question", runAsk},
		{"graph", "graph [--format mermaid|dot|json|text] [--question Q]", "dump the adaptive graph (optionally highlighting a question's path)", runGraph},
		{"plan", "plan [--history TEXT]... [--source S] [--route TYPE | --classify] [--sources FILE] [--json] QUESTION", "show the decision, intent and retrieval plan (no retrieval)", runPlan},
		{"ingest", "ingest [--store LOC] [--tenant T] [--source S] [--faq FILE]... [--prune] [--follow-symlinks] [--verbose] PATH...", "load files into a knowledge base", runIngest},
		{"ls", "ls [--store LOC] [--tenant T] [--json]", "list the documents of a knowledge base", runLs},
		{"eval", "eval retrieval|router|conversation ...", "evaluate retrieval, the router or conversation understanding on a data set", runEval},
		{"bench", "bench cost [--json] | " + benchRetrievalUsage, "measure latency and tokens per route class, or retrieval speed and recall at scale", runBench},
		{"serve", serveUsage, "serve the HTTP API, metrics and a web page that shows each run", runServe},
		{"mcp", "mcp [--store LOC] [--classifier offline|llm|cascade] [--tenant T] [--actor A] [--max-k N] [-v]", "serve the knowledge base to an MCP client (agent) over stdio", runMCP},
		{"repair", "repair --store embedded:DIR [--json] [--dry-run]", "salvage a damaged embedded store (exit 1 if anything was lost)", runRepair},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(e.stderr, "adaptrag %s: %v\nusage: adaptrag %s\n", c.name, err, c.usage)
			return 2
		}
		fmt.Fprintf(e.stderr, "adaptrag %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(e.stderr, "adaptrag: unknown command %q\n", args[0])
	usage(e.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "adaptrag: adaptive RAG on a typed state graph\n\nusage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  adaptrag %-8s %s\n", c.name, c.short)
	}
	fmt.Fprintln(w, "\nRun 'adaptrag COMMAND -h' for a command's flags.")
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ", ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(e *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses flags, allowing them after positional arguments too
// ("ask QUESTION --json"), and wraps errors as usage errors.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
