package service

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/graph"
	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
)

// MaxSearchK is the most passages POST /v1/search returns.
const MaxSearchK = api.MaxSearchK

// askRequest is the body of POST /v1/ask (api.AskRequest).
type askRequest api.AskRequest

// searchRequest is the body of POST /v1/search (api.SearchRequest).
type searchRequest api.SearchRequest

// runBody is what asks and searches share.
type runBody interface {
	// claims are the tenant and actor the body names (nil: none).
	claims() (tenant, actor *string)
	timeoutMs() int64
	// question is the text the run will answer or search for.
	question() string
	// check refuses values out of range before a run slot is taken.
	check() *apiError
}

func (b *askRequest) claims() (*string, *string) { return b.Tenant, b.Actor }
func (b *askRequest) timeoutMs() int64           { return b.TimeoutMs }
func (b *askRequest) question() string           { return b.Question }
func (b *askRequest) check() *apiError           { return nil }

func (b *searchRequest) claims() (*string, *string) { return b.Tenant, b.Actor }
func (b *searchRequest) timeoutMs() int64           { return b.TimeoutMs }
func (b *searchRequest) question() string           { return b.Query }
func (b *searchRequest) check() *apiError {
	if b.K < 0 || b.K > MaxSearchK {
		return newError(CodeInvalidRequest, "k %d is out of range: 0 (the plan's) to %d", b.K, MaxSearchK)
	}
	switch plan.Mode(b.Mode) {
	case "", plan.ModeDense, plan.ModeHybrid:
		return nil
	}
	return newError(CodeInvalidRequest, "mode %q: want \"dense\", \"hybrid\" or \"\" (the plan's)", b.Mode)
}

// messages converts a body's history.
func messages(h []api.Message) []adaptrag.Message {
	if h == nil {
		return nil
	}
	out := make([]adaptrag.Message, len(h))
	for i, m := range h {
		out[i] = adaptrag.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// response is a result in the v1 wire format, with the id of its run for
// GET /v1/graph?run=ID, and its debug record when the request asked.
func response(res *adaptrag.Result, runID string, debug bool) api.Response {
	var out api.Response
	if debug {
		out = res.V1Debug()
	} else {
		out = res.V1()
	}
	out.RunID = runID
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, newError(CodeInternal, "encoding the response failed"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decode reads a JSON body into v: application/json, at most MaxBodyBytes,
// valid UTF-8, one object with known fields of the right types.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return newError(CodeUnsupportedMedia, "send the body as Content-Type: application/json, not %q", ct)
		}
	} else {
		return newError(CodeUnsupportedMedia, "send the body as Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return newError(CodeBodyTooLarge, "the body is larger than %d bytes", s.cfg.MaxBodyBytes)
		}
		if isTimeout(err) {
			return newError(CodeRequestTimeout, "the body did not arrive within %s", s.readTimeout)
		}
		// The error names both ends of the connection: keep it for the log.
		s.log.Info("reading a request body failed", slog.String("path", r.URL.Path), slog.Any("err", err))
		return newError(CodeInvalidJSON, "the body could not be read to its end")
	}
	if !utf8.Valid(body) {
		// encoding/json would silently replace the bad bytes.
		return newError(CodeInvalidUTF8, "the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return newError(CodeInvalidJSON, "%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return newError(CodeInvalidJSON, "the body has data after its JSON object")
	}
	return nil
}

// jsonProblem says what is wrong with a body in the client's terms.
func jsonProblem(err error) string {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if te.Field == "" {
			return fmt.Sprintf("the body is a JSON %s; want an object", te.Value)
		}
		return fmt.Sprintf("field %q is a JSON %s; want %s", te.Field, te.Value, jsonType(te.Type.String()))
	}
	if errors.Is(err, io.EOF) {
		return "the body is empty; want a JSON object"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON body ends early"
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + msg
	}
	return err.Error()
}

func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return goType
}

// checkCaller refuses a body that names a tenant or an actor other than
// the caller's.
func checkCaller(c caller, body runBody) *apiError {
	tenant, actor := body.claims()
	if tenant != nil && *tenant != c.Tenant {
		return newError(CodeForbiddenTenant, "the tenant comes from the API key; this key may not act for tenant %q", *tenant)
	}
	if actor != nil && *actor != c.Actor {
		return newError(CodeForbiddenTenant, "the actor comes from the API key; this key may not act as %q", *actor)
	}
	return nil
}

// timeout is a request's run timeout: timeout_ms, from 1 to
// Config.Timeout in milliseconds, or 0 for Config.Timeout. The comparison
// is made in milliseconds, so no value overflows a time.Duration.
func (s *Server) timeout(ms int64) (time.Duration, *apiError) {
	limit := s.cfg.Timeout
	switch {
	case ms == 0:
		return limit, nil
	case ms < 0 || ms > limit.Milliseconds():
		return 0, newError(CodeInvalidRequest, "timeout_ms %d is out of range: 1 to %d (this server's timeout), or 0 for the server's", ms, limit.Milliseconds())
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// checkParts refuses a compound question with more sub-questions than
// Config.MaxQuestionParts: each part is retrieved on its own, and a
// question of dozens of parts would run out of the run's step budget.
// Questions too long for the pipeline are left to its own check.
func (s *Server) checkParts(q string) *apiError {
	if utf8.RuneCountInString(q) > s.cfg.Pipeline.MaxQuestionRunes() {
		return nil
	}
	if n := len(query.Split(q)); n > s.cfg.MaxQuestionParts {
		return newError(CodeTooManyParts, "the question asks %d separate things; ask at most %d at a time", n, s.cfg.MaxQuestionParts)
	}
	return nil
}

// prepare does what asks and searches share before running: decode,
// check the caller and the timeout, take a run slot and name the run.
func (s *Server) prepare(w http.ResponseWriter, r *http.Request, c caller, body runBody) (ctx context.Context, runID string, limit time.Duration, done func(), ok bool) {
	if e := s.decode(w, r, body); e != nil {
		s.reject(r, e.Code)
		writeError(w, e)
		return nil, "", 0, nil, false
	}
	if e := checkCaller(c, body); e != nil {
		s.reject(r, e.Code)
		s.log.Warn("refused a body naming another caller", slog.String("tenant", c.Tenant), slog.String("path", r.URL.Path))
		writeError(w, e)
		return nil, "", 0, nil, false
	}
	limit, e := s.timeout(body.timeoutMs())
	if e == nil {
		e = body.check()
	}
	if e == nil {
		e = s.checkParts(body.question())
	}
	if e != nil {
		s.reject(r, e.Code)
		writeError(w, e)
		return nil, "", 0, nil, false
	}
	release, ok := s.acquire()
	if !ok {
		s.busy(w, r)
		return nil, "", 0, nil, false
	}
	runID = newRunID()
	infoOf(r.Context()).runID = runID
	w.Header().Set("X-Run-Id", runID)
	// The response may take as long as the run, and a little more.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(limit + 10*time.Second))
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	s.meters.runs.Add(ctx, 1)
	return ctx, runID, limit, func() {
		s.meters.runs.Add(context.WithoutCancel(ctx), -1)
		cancel()
		release()
	}, true
}

// fail answers a failed run (or logs a client that went away).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, runID string, limit time.Duration, err error) {
	e, cerr := classify(err, limit.String())
	if cerr != nil {
		infoOf(r.Context()).clientGone = true
		s.log.Info("client went away; its run was cancelled", slog.String("run_id", runID))
		return
	}
	e.RunID = runID
	lvl := slog.LevelWarn
	if e.Code == CodeInternal {
		lvl = slog.LevelError
	}
	s.log.Log(r.Context(), lvl, "run failed", slog.String("run_id", runID), slog.String("code", string(e.Code)), slog.Any("err", err))
	writeError(w, e)
}

func (s *Server) handleAsk(w http.ResponseWriter, r *http.Request, c caller) {
	var body askRequest
	ctx, runID, limit, done, ok := s.prepare(w, r, c, &body)
	if !ok {
		return
	}
	defer done()
	req := adaptrag.Request{Question: body.Question, History: messages(body.History), Source: body.Source,
		Scope: retrieval.Scope{Tenant: c.Tenant}, Actor: c.Actor, Thread: body.Thread}
	if wantsEvents(r) {
		s.stream(ctx, w, r, runID, limit, c, req, body.Debug)
		return
	}
	res, err := s.cfg.Pipeline.Ask(ctx, req)
	if res != nil {
		s.runs.put(runID, c.Tenant, res.Debug.Steps)
	}
	if err != nil {
		s.fail(w, r, runID, limit, err)
		return
	}
	writeJSON(w, http.StatusOK, response(res, runID, body.Debug))
}

// wantsEvents reports whether the client asked for Server-Sent Events.
func wantsEvents(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// stream runs req and sends its events: "node" as each node finishes,
// "token" with pieces of the answer, then "result" or "error". Events
// produced together are written together (see sseWriter); the final one is
// flushed at once. An error before the first event is an ordinary error
// response.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, runID string, limit time.Duration, c caller, req adaptrag.Request, debug bool) {
	gone := func() {
		infoOf(r.Context()).clientGone = true
		s.log.Info("client went away; its run was cancelled", slog.String("run_id", runID))
	}
	out := newSSE(w, sseCoalesce)
	defer out.close()
	for ev, err := range s.cfg.Pipeline.Stream(ctx, req) {
		if err != nil {
			if !out.started {
				s.fail(w, r, runID, limit, err)
				return
			}
			e, cerr := classify(err, limit.String())
			if cerr != nil {
				gone()
				return
			}
			e.RunID = runID
			s.log.Warn("streamed run failed", slog.String("run_id", runID), slog.String("code", string(e.Code)), slog.Any("err", err))
			_ = out.last("error", errorBody{Error: *e})
			return
		}
		var werr error
		switch ev.Kind {
		case adaptrag.EventNode:
			werr = out.send("node", nodeEvent{Node: ev.Node, Step: ev.Step, Label: ev.Label,
				DurationMs: float64(ev.Duration.Microseconds()) / 1000, TokensIn: ev.Usage.InputTokens, TokensOut: ev.Usage.OutputTokens})
		case adaptrag.EventToken:
			werr = out.send("token", tokenEvent{Node: ev.Node, Text: ev.Text})
		case adaptrag.EventResult:
			s.runs.put(runID, c.Tenant, ev.Result.Debug.Steps)
			werr = out.last("result", response(ev.Result, runID, debug))
		}
		if werr != nil {
			// The client is gone: leaving the loop cancels the run.
			gone()
			return
		}
	}
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, c caller) {
	var body searchRequest
	ctx, runID, limit, done, ok := s.prepare(w, r, c, &body)
	if !ok {
		return
	}
	defer done()
	res, err := s.cfg.Pipeline.Search(ctx, adaptrag.SearchRequest{Query: body.Query, K: body.K, Mode: plan.Mode(body.Mode),
		History: messages(body.History), Source: body.Source, Scope: retrieval.Scope{Tenant: c.Tenant}, Actor: c.Actor, Thread: body.Thread})
	if res != nil {
		s.runs.put(runID, c.Tenant, res.Debug.Steps)
	}
	if err != nil {
		s.fail(w, r, runID, limit, err)
		return
	}
	writeJSON(w, http.StatusOK, response(res, runID, body.Debug))
}

// handleSchema serves the JSON Schema of a v1 body: ?type=response (the
// default), ask_request, search_request, error, limits, node_event or
// token_event.
func (s *Server) handleSchema(w http.ResponseWriter, r *http.Request) {
	name := cmp.Or(r.URL.Query().Get("type"), api.SchemaResponse)
	b, err := api.Schema(name)
	if err != nil {
		writeError(w, newError(CodeInvalidRequest, "type %q: want one of %s", name, strings.Join(api.SchemaNames, ", ")))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/schema+json")
	h.Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(append(b, '\n'))
}

// limits are the bounds this server puts on requests.
func (s *Server) limits() api.Limits {
	return api.Limits{MaxQuestionRunes: s.cfg.Pipeline.MaxQuestionRunes(), MaxQuestionParts: s.cfg.MaxQuestionParts,
		MaxTimeoutMs: s.cfg.Timeout.Milliseconds(), MaxBodyBytes: s.cfg.MaxBodyBytes, MaxSearchK: MaxSearchK}
}

func (s *Server) handleLimits(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.limits())
}

// isTimeout reports an I/O deadline: the server's read timeout.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

func (s *Server) handleGraph(w http.ResponseWriter, r *http.Request, c caller) {
	q := r.URL.Query()
	var path *graph.Path
	if id := q.Get("run"); id != "" {
		p, ok := s.runs.get(id, c.Tenant)
		if !ok {
			writeError(w, newError(CodeNotFound, "no run %q: unknown, made with another key's tenant, or older than the last %d runs", id, s.cfg.KeepRuns))
			return
		}
		path = &p
	}
	var text string
	ctype := "text/plain; charset=utf-8"
	switch f := q.Get("format"); f {
	case "", "mermaid":
		text = s.diagram.Mermaid(path)
	case "dot":
		text, ctype = s.diagram.DOT(path), "text/vnd.graphviz; charset=utf-8"
	case "text":
		text = s.diagram.Text(path)
	case "json":
		b, err := s.diagram.JSON(path)
		if err != nil {
			writeError(w, newError(CodeInternal, "encoding the diagram failed"))
			return
		}
		text, ctype = string(b)+"\n", "application/json; charset=utf-8"
	default:
		writeError(w, newError(CodeInvalidRequest, "format %q: want mermaid, dot, json or text", f))
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, text)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReady runs the readiness checks at once; any failure, or a server
// that is shutting down, is a 503. The reasons go to the log.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "shutting down"})
		return
	}
	results := make(map[string]string, len(s.cfg.Ready))
	var mu sync.Mutex
	var wg sync.WaitGroup
	ready := true
	for _, ch := range s.cfg.Ready {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), s.cfg.CheckTimeout)
			defer cancel()
			err := ch.Check(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ready = false
				results[ch.Name] = "unavailable"
				s.log.Warn("readiness check failed", slog.String("check", ch.Name), slog.Any("err", err))
				return
			}
			results[ch.Name] = "ok"
		})
	}
	wg.Wait()
	if !ready {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "checks": results})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": results})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		writeError(w, newError(CodeNotFound, "this server exports no metrics"))
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
