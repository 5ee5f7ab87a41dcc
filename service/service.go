// Package service serves an adaptrag Pipeline over HTTP: JSON asks and
// searches, an ask streamed as Server-Sent Events (each node as it
// finishes, the answer's tokens, the result), the graph's diagram with the
// path a run took, health and readiness probes, Prometheus metrics and a
// web page that shows a run as it happens.
//
// Callers are identified by API keys (Config.Keys): a request's tenant and
// actor are the key's, never the request body's. Without keys the service
// answers for the default tenant and only to loopback clients; the command
// "adaptrag serve" also refuses to listen anywhere but on loopback then.
//
// docs/service.md documents the API, the error codes and the limits.
package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/mcpserver"
	"github.com/adaptrag/adaptrag/retrieval"
)

// ScopeName is the instrumentation scope of the service's spans and
// metrics.
const ScopeName = "github.com/adaptrag/adaptrag/service"

// StatusClientClosed is the status the request log and the HTTP metrics
// record for a request whose client went away before anything was sent
// (nginx's 499); no response carries it.
const StatusClientClosed = 499

// Defaults of Config's zero fields.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxRuns      = 16
	DefaultRetryAfter   = time.Second
	DefaultKeepRuns     = 256
	DefaultCheckTimeout = 2 * time.Second
	// DefaultMaxQuestionParts bounds the sub-questions of a compound
	// question.
	DefaultMaxQuestionParts = 16
	// DefaultDrainDelay is how long /readyz answers 503 before the
	// listener closes at shutdown.
	DefaultDrainDelay = time.Second
)

// Config configures a Server. Pipeline is required; zero fields take the
// defaults above.
type Config struct {
	// Pipeline answers the questions.
	Pipeline *adaptrag.Pipeline
	// Keys are the API keys and the callers they stand for. With none,
	// requests are not authenticated, use the default tenant, and are
	// refused unless their Host is loopback (a defence against DNS
	// rebinding).
	Keys []Key
	// Timeout bounds each run (default 60s; at least 1ms); a request's
	// timeout_ms may shorten it, never lengthen it.
	Timeout time.Duration
	// MaxBodyBytes bounds a request body (default 1 MiB).
	MaxBodyBytes int64
	// MaxRuns bounds the asks and searches running at once (default 16);
	// beyond it requests get 429 with Retry-After.
	MaxRuns int
	// MaxQuestionParts bounds the sub-questions of a compound question
	// (default 16); a question with more gets 400 too_many_parts.
	MaxQuestionParts int
	// DrainDelay is how long Serve keeps accepting requests after its
	// context ends, with /readyz answering 503, so that a load balancer
	// sees the server leave before its listener closes (default 1s;
	// negative: none).
	DrainDelay time.Duration
	// RetryAfter is the Retry-After of a 429 (default 1s).
	RetryAfter time.Duration
	// KeepRuns is how many finished runs' paths are kept for
	// GET /v1/graph?run=ID (default 256; negative keeps none).
	KeepRuns int
	// JaegerUI, when set, is the base URL of a Jaeger UI; the web page
	// links each run to JaegerUI/trace/TRACEID.
	JaegerUI string
	// Ready are the checks of GET /readyz (the store, the models), each
	// given CheckTimeout.
	Ready        []Check
	CheckTimeout time.Duration
	// Metrics serves GET /metrics (see NewMetrics); nil: 404.
	Metrics http.Handler
	// MeterProvider receives the HTTP metrics; nil: the global provider.
	MeterProvider metric.MeterProvider
	// TracerProvider makes the server spans that runs are children of;
	// nil: the global provider.
	TracerProvider trace.TracerProvider
	// Propagator reads the caller's trace context from the request
	// headers; nil: W3C Trace Context (traceparent, tracestate).
	Propagator propagation.TextMapPropagator
	// Logger receives one line per request and every failure; nil:
	// slog.Default(). Keys and questions are never logged.
	Logger *slog.Logger
	// MCP, when set, is served at /mcp behind the same API keys: each
	// request's context carries the key's caller (adaptrag.CallerFrom), so
	// the tenant of an MCP session is its key's, never a tool argument's
	// (see mcpserver.Server.Handler). Its requests carry the service's
	// limits (mcpserver.WithLimits): each tool call takes a run slot and
	// the Timeout, bodies are bounded by MaxBodyBytes.
	MCP http.Handler
	// Files maps a tenant to the folder its knowledge base was ingested
	// from: GET /v1/files/ORIGIN serves a citation's file from the
	// caller's tenant's folder, never another's (service/files.go). Nil
	// serves no files.
	Files map[string]string
}

// Check is one readiness check: nil when the dependency it names is
// usable.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Server is the HTTP handler of the service. It is safe for concurrent
// use.
type Server struct {
	cfg      Config
	keys     *keyring // nil: no authentication
	runs     *runStore
	sem      chan struct{}
	diagram  *graph.Diagram
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	meters   *httpMeters
	log      *slog.Logger
	mux      *http.ServeMux
	draining atomic.Bool
	// readTimeout bounds reading a request, headers and body (30s).
	readTimeout time.Duration
}

// New checks cfg and builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Pipeline == nil {
		return nil, errors.New("service: Config.Pipeline is required")
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxRuns = cmp.Or(cfg.MaxRuns, DefaultMaxRuns)
	cfg.RetryAfter = cmp.Or(cfg.RetryAfter, DefaultRetryAfter)
	cfg.KeepRuns = cmp.Or(cfg.KeepRuns, DefaultKeepRuns)
	cfg.CheckTimeout = cmp.Or(cfg.CheckTimeout, DefaultCheckTimeout)
	cfg.MaxQuestionParts = cmp.Or(cfg.MaxQuestionParts, DefaultMaxQuestionParts)
	cfg.DrainDelay = cmp.Or(cfg.DrainDelay, DefaultDrainDelay)
	if cfg.Timeout < 0 || cfg.MaxBodyBytes < 0 || cfg.MaxRuns < 0 || cfg.MaxQuestionParts < 0 {
		return nil, errors.New("service: Timeout, MaxBodyBytes, MaxRuns and MaxQuestionParts must not be negative")
	}
	if cfg.Timeout < time.Millisecond {
		return nil, errors.New("service: Timeout must be at least 1ms")
	}
	if cfg.JaegerUI != "" && !strings.HasPrefix(cfg.JaegerUI, "http://") && !strings.HasPrefix(cfg.JaegerUI, "https://") {
		return nil, fmt.Errorf("service: JaegerUI %q is not an http(s) URL", cfg.JaegerUI)
	}
	cfg.JaegerUI = strings.TrimRight(cfg.JaegerUI, "/")
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	meters, err := newHTTPMeters(cfg.MeterProvider)
	if err != nil {
		return nil, fmt.Errorf("service: metrics: %w", err)
	}
	s := &Server{
		cfg: cfg, runs: newRunStore(max(cfg.KeepRuns, 0)), sem: make(chan struct{}, cfg.MaxRuns),
		diagram: cfg.Pipeline.Diagram(), tracer: tp.Tracer(ScopeName), prop: prop, meters: meters,
		log: cmp.Or(cfg.Logger, slog.Default()), readTimeout: 30 * time.Second,
	}
	if len(cfg.Keys) > 0 {
		s.keys = newKeyring(cfg.Keys)
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.Handle("/v1/ask", s.only("POST", s.authed(s.handleAsk)))
	m.Handle("/v1/search", s.only("POST", s.authed(s.handleSearch)))
	m.Handle("/v1/graph", s.only("GET", s.authed(s.handleGraph)))
	m.Handle("/v1/schema", s.only("GET", http.HandlerFunc(s.handleSchema)))
	m.Handle("/v1/limits", s.only("GET", http.HandlerFunc(s.handleLimits)))
	m.Handle(filesPrefix, s.only("GET", s.authed(s.handleFile)))
	if s.cfg.MCP != nil {
		m.Handle("/mcp", s.authed(s.serveMCP))
	}
	m.Handle("/healthz", s.only("GET", http.HandlerFunc(s.handleHealth)))
	m.Handle("/readyz", s.only("GET", http.HandlerFunc(s.handleReady)))
	m.Handle("/metrics", s.only("GET", http.HandlerFunc(s.handleMetrics)))
	m.Handle("/{$}", s.only("GET", http.HandlerFunc(s.handleIndex)))
	m.Handle("/ui/config.json", s.only("GET", http.HandlerFunc(s.handleUIConfig)))
	m.Handle("/assets/", s.only("GET", http.HandlerFunc(s.handleAsset)))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(CodeNotFound, "no such path: %s", r.URL.Path))
	})
	s.mux = m
}

// serveMCP passes a request to the MCP handler with the key's caller and
// the service's limits: a tool call takes a run slot (--max-runs) and the
// run timeout, the body is bounded by MaxBodyBytes, and with keys the
// request counts as authenticated (so a proxy's Host is accepted).
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, c caller) {
	ctx := adaptrag.WithCaller(r.Context(), adaptrag.Caller{Scope: retrieval.Scope{Tenant: c.Tenant}, Actor: c.Actor})
	ctx = mcpserver.WithLimits(ctx, mcpserver.Limits{
		Acquire: func(ctx context.Context) (func(), error) {
			release, ok := s.acquire()
			if !ok {
				s.reject(r, CodeTooManyRuns)
				return nil, fmt.Errorf("%w (%d runs are in progress, the most this server runs at once)", mcpserver.ErrBusy, s.cfg.MaxRuns)
			}
			s.meters.runs.Add(ctx, 1)
			return func() { s.meters.runs.Add(context.WithoutCancel(ctx), -1); release() }, nil
		},
		Timeout: s.cfg.Timeout, MaxBodyBytes: s.cfg.MaxBodyBytes, Authenticated: s.keys != nil,
	})
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	}
	s.cfg.MCP.ServeHTTP(w, r.WithContext(ctx))
}

// Drain makes /readyz report 503 from now on, so that a load balancer
// stops sending requests while those in flight finish.
func (s *Server) Drain() { s.draining.Store(true) }

// Serve serves on ln until ctx is done, then shuts down gracefully: for
// Config.DrainDelay it goes on serving with /readyz answering 503, then it
// stops accepting, lets the requests in flight finish within grace, and
// cuts those still running after it (their runs are cancelled). It returns
// nil after a graceful shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.readTimeout, // a request's headers and body; the run has its own timeout
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Drain()
	if s.cfg.DrainDelay > 0 {
		s.log.Info("shutting down: /readyz reports 503 before the listener closes", slog.Duration("drain_delay", s.cfg.DrainDelay))
		select {
		case <-time.After(s.cfg.DrainDelay):
		case err := <-errc:
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		s.log.Warn("shutdown: requests still running after the grace period were cut", slog.Duration("grace", grace), slog.Any("err", err))
		err = errors.Join(err, srv.Close())
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// reqInfo is what a handler tells the request log about its request.
type reqInfo struct {
	runID, tenant string
	authed        bool
	// clientGone reports a client that went away before its answer.
	clientGone bool
}

type reqInfoKey struct{}

func infoOf(ctx context.Context) *reqInfo {
	if ri, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok {
		return ri
	}
	return &reqInfo{}
}

// ServeHTTP serves a request: every one is measured, logged and protected
// from panics; requests under /v1/ continue the caller's trace.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	ri := &reqInfo{}
	ctx := context.WithValue(r.Context(), reqInfoKey{}, ri)
	var span trace.Span
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		ctx = s.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		ctx, span = s.tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
	}
	r = r.WithContext(ctx)
	method := attribute.String("http.request.method", r.Method)
	s.meters.active.Add(ctx, 1, metric.WithAttributes(method))
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				// A deliberate abort: count it, then let net/http cut the
				// connection.
				defer panic(p)
			} else {
				s.log.Error("panic serving a request", slog.String("path", r.URL.Path), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					writeError(sw, newError(CodeInternal, "internal error"))
				} else {
					// The response has begun (a stream): all that is left
					// is to cut it.
					defer panic(http.ErrAbortHandler)
				}
			}
		}
		status := cmp.Or(sw.status, http.StatusOK)
		if ri.clientGone && sw.status == 0 {
			// Nothing was sent: the client closed first (nginx's 499).
			status = StatusClientClosed
		}
		route := cmp.Or(r.Pattern, "other")
		d := time.Since(start)
		bg := context.WithoutCancel(ctx)
		s.meters.active.Add(bg, -1, metric.WithAttributes(method))
		s.meters.duration.Record(bg, d.Seconds(), metric.WithAttributes(method,
			attribute.String("http.route", route), attribute.Int("http.response.status_code", status)))
		if span != nil {
			span.SetName(r.Method + " " + route)
			span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}
		level := slog.LevelInfo
		switch {
		case status >= 500:
			level = slog.LevelError
		case !strings.HasPrefix(r.URL.Path, "/v1/"):
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
			slog.Float64("ms", float64(d.Microseconds())/1000)}
		if ri.runID != "" {
			attrs = append(attrs, slog.String("run_id", ri.runID))
		}
		if ri.authed {
			attrs = append(attrs, slog.String("tenant", ri.tenant))
		}
		if ri.clientGone {
			attrs = append(attrs, slog.Bool("client_closed", true))
		}
		s.log.LogAttrs(bg, level, "request", attrs...)
	}()
	h := sw.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if s.keys == nil && !loopbackHost(r.Host) {
		writeError(sw, newError(CodeForbiddenHost, "this server has no authentication and answers only to localhost, not to host %q", r.Host))
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// loopbackHost reports whether a Host header names this machine by a
// loopback address or "localhost".
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// only refuses methods other than method with 405.
func (s *Server) only(method string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && !(method == "GET" && r.Method == "HEAD") {
			allow := method
			if method == "GET" {
				allow = "GET, HEAD"
			}
			w.Header().Set("Allow", allow)
			writeError(w, newError(CodeMethodNotAllowed, "%s %s is not served; use %s", r.Method, r.URL.Path, method))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authed authenticates a request and passes its caller on.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := caller{}
		if s.keys != nil {
			if n := len(r.Header.Values("Authorization")); n > 1 {
				s.reject(r, CodeInvalidRequest)
				writeError(w, newError(CodeInvalidRequest, "the request has %d Authorization headers; send one", n))
				return
			}
			token, ok := bearer(r.Header.Get("Authorization"))
			if !ok {
				s.reject(r, CodeUnauthorized)
				writeError(w, newError(CodeUnauthorized, "send an API key as \"Authorization: Bearer KEY\""))
				return
			}
			if c, ok = s.keys.lookup(token); !ok {
				s.reject(r, CodeUnauthorized)
				writeError(w, newError(CodeUnauthorized, "unknown API key"))
				return
			}
		}
		ri := infoOf(r.Context())
		ri.authed, ri.tenant = true, c.Tenant
		h(w, r, c)
	})
}

func (s *Server) reject(r *http.Request, c Code) {
	s.meters.rejected.Add(context.WithoutCancel(r.Context()), 1, metric.WithAttributes(attribute.String("reason", string(c))))
}

// acquire takes a run slot, or reports that all are taken.
func (s *Server) acquire() (release func(), ok bool) {
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem }, true
	default:
		return nil, false
	}
}

// busy answers 429 with Retry-After.
func (s *Server) busy(w http.ResponseWriter, r *http.Request) {
	s.reject(r, CodeTooManyRuns)
	secs := max(1, int((s.cfg.RetryAfter+time.Second-1)/time.Second))
	w.Header().Set("Retry-After", fmt.Sprint(secs))
	writeError(w, newError(CodeTooManyRuns, "%d runs are in progress, the most this server runs at once; retry after %ds", s.cfg.MaxRuns, secs))
}
