package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/service"
)

const serveUsage = "serve [--addr HOST:PORT] [--store LOC] [--records URL --records-schema FILE] [--auth FILE] [--jaeger-ui URL] [--classifier offline|llm|cascade] [--timeout D] [--max-runs N] [--max-body BYTES] [--max-question RUNES] [--max-parts N] [--keep-runs N] [--drain-delay D] [--shutdown-timeout D] [--files DIR|TENANT=DIR,...]"

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; without --auth it must be a loopback address")
	store := fs.String("store", e.getenv("ADAPTRAG_STORE"), "knowledge base: embedded:DIR or qdrant://host:6334/collection (default: $ADAPTRAG_STORE, else the bundled sample)")
	rf := addRecordsFlags(fs)
	authFile := fs.String("auth", "", `API keys: a JSON array of {"key", "tenant", "actor"}; without it, the default tenant on loopback only`)
	jaegerUI := fs.String("jaeger-ui", "", "base URL of a Jaeger UI; the web page links each run to URL/trace/TRACEID")
	clf := fs.String("classifier", "", "offline, llm or cascade (default: cascade with a model, offline without)")
	timeout := fs.Duration("timeout", service.DefaultTimeout, "the longest a run may take (a request's timeout_ms may shorten it)")
	maxRuns := fs.Int("max-runs", service.DefaultMaxRuns, "asks and searches running at once; more get 429")
	maxBody := fs.Int64("max-body", service.DefaultMaxBodyBytes, "largest request body, in bytes")
	maxQuestion := fs.Int("max-question", 2000, "longest question, in characters")
	maxParts := fs.Int("max-parts", service.DefaultMaxQuestionParts, "most sub-questions of a compound question; more get 400 too_many_parts")
	keepRuns := fs.Int("keep-runs", service.DefaultKeepRuns, "finished runs whose paths GET /v1/graph?run=ID can show")
	drain := fs.Duration("drain-delay", service.DefaultDrainDelay, "on SIGTERM or interrupt, how long /readyz answers 503 before the listener closes (0: none)")
	grace := fs.Duration("shutdown-timeout", 30*time.Second, "on SIGTERM or interrupt, how long requests in flight may take to finish")
	filesFlag := fs.String("files", "", "folder the knowledge base was ingested from, served to the default tenant so citations open (GET /v1/files/ORIGIN); with --auth, TENANT=DIR,TENANT=DIR")
	threads := fs.String("threads", e.getenv("ADAPTRAG_THREADS"), `thread store for "thread" in requests: sqlite:PATH, or a PostgreSQL URL shared by replicas (default: $ADAPTRAG_THREADS; none: requests with a thread are refused)`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	switch {
	case *timeout < time.Millisecond, *maxRuns <= 0, *maxBody <= 0, *maxQuestion <= 0, *maxParts <= 0, *grace < 0, *drain < 0:
		return fmt.Errorf("%w: --timeout (at least 1ms), --max-runs, --max-body, --max-question and --max-parts must be positive, --drain-delay and --shutdown-timeout not negative", errUsage)
	}
	if *drain == 0 {
		*drain = -1 // service.Config: negative is none, zero the default
	}
	if *jaegerUI != "" && !strings.HasPrefix(*jaegerUI, "http://") && !strings.HasPrefix(*jaegerUI, "https://") {
		return fmt.Errorf("%w: --jaeger-ui %q is not an http(s) URL", errUsage, *jaegerUI)
	}
	files := map[string]string{}
	for _, p := range strings.Split(*filesFlag, ",") {
		if tenant, dir, ok := strings.Cut(p, "="); ok {
			files[tenant] = dir
		} else if p != "" {
			files[""] = p
		}
	}
	var keys []service.Key
	if *authFile != "" {
		if keys, err = service.LoadKeys(*authFile); err != nil {
			return err
		}
	} else if err := loopbackAddr(*addr); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	metrics, err := service.NewMetrics()
	if err != nil {
		return err
	}
	defer metrics.Shutdown(context.WithoutCancel(ctx))
	cfg := llm.ConfigFromEnv()
	a, err := build(ctx, options{classifier: *clf, store: *store, records: rf, llm: cfg, tune: func(o *adaptrag.Options) {
		o.MeterProvider, o.MaxQuestionRunes = metrics.Provider, *maxQuestion
	}, threads: *threads})
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	mcpSrv, err := mcpserver.New(a.pipe, mcpserver.Config{KB: a.kb, TracerProvider: a.tp, Logger: log, MaxQuestionRunes: *maxQuestion})
	if err != nil {
		return err
	}

	checks := []service.Check{
		{Name: "store", Check: func(ctx context.Context) error { return searchable(ctx, a.kb) }},
		{Name: "embedder", Check: func(ctx context.Context) error {
			_, err := a.embedder.Embed(ctx, []string{"readiness"})
			return err
		}},
	}
	if cfg.Configured() {
		checks = append(checks, service.Check{Name: "model", Check: modelReachable(cfg)})
	}
	srv, err := service.New(service.Config{
		Pipeline: a.pipe, Keys: keys, Timeout: *timeout, MaxBodyBytes: *maxBody, MaxRuns: *maxRuns, KeepRuns: *keepRuns,
		MaxQuestionParts: *maxParts, DrainDelay: *drain,
		JaegerUI: *jaegerUI, Ready: checks, Metrics: metrics.Handler, MeterProvider: metrics.Provider,
		TracerProvider: a.tp, Logger: log, MCP: mcpSrv.Handler(nil), Files: files,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	what := "the bundled sample handbook"
	if *store != "" {
		what = *store
	}
	model := "offline"
	if cfg.Configured() {
		model = cfg.Provider()
	}
	if keys == nil {
		log.Warn("no --auth: requests are not authenticated and use the default tenant; listening on loopback only")
	} else {
		log.Info("authentication on", slog.Int("keys", len(keys)))
	}
	log.Info("serving", slog.String("url", "http://"+ln.Addr().String()+"/"), slog.String("store", what), slog.String("model", model),
		slog.Duration("timeout", *timeout), slog.Int("max_runs", *maxRuns))
	err = srv.Serve(ctx, ln, *grace)
	log.Info("stopped")
	return err
}

// loopbackAddr refuses an address that is not on loopback: a server
// without authentication must not be reachable from the network.
func loopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %q: %v", errUsage, addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	where := "host " + host
	if host == "" {
		where = "every interface"
	}
	return fmt.Errorf("%w: --addr %s listens on %s; without --auth the server listens on loopback only (127.0.0.1, ::1, localhost): give --auth FILE to serve the network", errUsage, addr, where)
}

// searchable is the store's readiness: one small search per collection.
func searchable(ctx context.Context, k *kb.KB) error {
	for _, c := range []retrieval.Searcher{k.Docs, k.FAQ} {
		if c == nil {
			continue
		}
		sp, ok := c.(retrieval.SparseSearcher)
		if !ok {
			continue // every store kb opens has one; a searcher without it is not probed
		}
		if _, err := sp.SearchSparse(ctx, retrieval.Request{Text: "readiness", K: 1}); err != nil {
			return err
		}
	}
	return nil
}

// modelReachable checks that the model server answers: its list of models
// (OpenAI-compatible) or tags (Ollama). Any answer below 500 other than a
// refused key counts, since some compatible servers list no models.
func modelReachable(cfg llm.Config) func(context.Context) error {
	var url string
	switch cfg.Provider() {
	case "openai":
		url = strings.TrimRight(cmp.Or(cfg.BaseURL, llm.DefaultOpenAIBaseURL), "/") + "/models"
	default:
		url = strings.TrimRight(cfg.OllamaHost, "/") + "/api/tags"
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return fmt.Errorf("model server %s: %s", url, resp.Status)
		}
		return nil
	}
}
