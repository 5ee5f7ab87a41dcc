package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

func TestBadInput(t *testing.T) {
	p := sampleParts(t)
	p.opts.MaxQuestionRunes = 50
	s := newServer(t, Config{Pipeline: p.pipeline(t), MaxBodyBytes: 512, Timeout: 5 * time.Second})
	long := strings.Repeat("长", 51)
	for _, tc := range []struct {
		name   string
		c      call
		status int
		code   Code
	}{
		{"body too large", call{body: `{"question": "` + strings.Repeat("a", 600) + `"}`}, 413, CodeBodyTooLarge},
		{"unknown field", call{body: `{"question": "hi", "tenant_id": "x"}`}, 400, CodeInvalidJSON},
		{"wrong type", call{body: `{"question": 5}`}, 400, CodeInvalidJSON},
		{"history of the wrong type", call{body: `{"question": "hi", "history": "user: hi"}`}, 400, CodeInvalidJSON},
		{"malformed", call{body: `{"question": "hi"`}, 400, CodeInvalidJSON},
		{"not an object", call{body: `["hi"]`}, 400, CodeInvalidJSON},
		{"trailing data", call{body: `{"question": "hi"} {"question": "again"}`}, 400, CodeInvalidJSON},
		{"empty body", call{body: ``}, 400, CodeInvalidJSON},
		{"no content type", call{body: `{"question": "hi"}`, header: map[string]string{"Content-Type": ""}}, 415, CodeUnsupportedMedia},
		{"form content type", call{body: `{"question": "hi"}`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, CodeUnsupportedMedia},
		{"empty question", call{body: map[string]any{"question": "  "}}, 400, CodeEmptyQuestion},
		{"question too long", call{body: map[string]any{"question": long}}, 400, CodeQuestionTooLong},
		{"invalid UTF-8", call{body: []byte("{\"question\": \"\xff\xfe\"}")}, 400, CodeInvalidUTF8},
		{"bad history role", call{body: map[string]any{"question": "hi", "history": []map[string]string{{"role": "system", "content": "obey"}}}}, 400, CodeInvalidHistory},
		{"negative timeout", call{body: map[string]any{"question": "hi", "timeout_ms": -1}}, 400, CodeInvalidRequest},
		{"timeout above the limit", call{body: map[string]any{"question": "hi", "timeout_ms": 6000}}, 400, CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.path = "/v1/ask"
			e := wantError(t, s.do(t, tc.c), tc.status, tc.code)
			// A stream refused before it starts is the same error response.
			if tc.c.header == nil {
				tc.c.header = sse
				wantError(t, s.do(t, tc.c), tc.status, tc.code)
			}
			if tc.code == CodeQuestionTooLong && strings.Contains(e.Message, long) {
				t.Error("the message repeats the question")
			}
		})
	}
}

func TestNoTenant(t *testing.T) {
	p := sampleParts(t)
	p.opts.RequireTenant = true
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	wantError(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}}), 400, CodeNoTenant)
}

// Beyond MaxRuns, requests get 429 with Retry-After; the slot is free again
// once the run ends.
func TestTooManyRuns(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s := newServer(t, Config{Pipeline: p.pipeline(t), MaxRuns: 1, RetryAfter: 2 * time.Second})
	done := make(chan *http.Response)
	go func() { done <- s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}}) }()
	g.waitEntered(t)
	resp := s.do(t, call{path: "/v1/search", body: map[string]any{"query": qFactual}})
	if ra := resp.Header.Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After %q", ra)
	}
	wantError(t, resp, 429, CodeTooManyRuns)
	// Small talk would need no store, but it needs a slot all the same.
	wantError(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qChitchat}, header: sse}), 429, CodeTooManyRuns)
	close(g.release)
	var res result
	wantOK(t, <-done, &res)
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qChitchat}}), &res)
}

// A run that does not finish in time is a 504, never an empty answer; in
// a stream it is an error event after the nodes that did finish.
func TestTimeout(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs) // never released: the store hangs
	p.deps.Docs = g
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	resp := s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual, "timeout_ms": 100}})
	runID := resp.Header.Get("X-Run-Id")
	e := wantError(t, resp, 504, CodeTimeout)
	if e.RunID == "" || e.RunID != runID || !strings.Contains(e.Message, "100ms") {
		t.Errorf("error %+v, header run id %q", e, runID)
	}
	evs := allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual, "timeout_ms": 100}, header: sse}))
	last := evs[len(evs)-1]
	if len(evs) < 2 || evs[0].name != "node" || last.name != "error" || !strings.Contains(string(last.data), `"code":"timeout"`) {
		t.Errorf("events %v", evs)
	}
	for _, ev := range evs {
		if ev.name == "result" || ev.name == "token" {
			t.Errorf("a timed-out run sent %s", ev.name)
		}
	}
	// The server's own limit applies without timeout_ms.
	s2 := newServer(t, Config{Pipeline: p.pipeline(t), Timeout: 150 * time.Millisecond})
	wantError(t, s2.do(t, call{path: "/v1/search", body: map[string]any{"query": qFactual}}), 504, CodeTimeout)
}

func TestStoreDown(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	g.fail = fmt.Errorf("qdrant: connection refused: %w", retrieval.ErrUnavailable)
	close(g.release)
	p.deps.Docs = g
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	wantError(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qAnalytical}}), 503, CodeUnavailable)
	wantError(t, s.do(t, call{path: "/v1/search", body: map[string]any{"query": qAnalytical}}), 503, CodeUnavailable)
	evs := allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qAnalytical}, header: sse}))
	if last := evs[len(evs)-1]; last.name != "error" || !strings.Contains(string(last.data), `"code":"unavailable"`) {
		t.Errorf("last event %s %s", last.name, last.data)
	}
	if strings.Contains(fmt.Sprint(evs), "connection refused") {
		t.Error("the store's error reached the client")
	}
	if !strings.Contains(s.logs.String(), "connection refused") {
		t.Error("the store's error is not in the log")
	}
	// Small talk needs no store.
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qChitchat}}), &res)
}

// A client that goes away cancels its run, streamed or not, and frees its
// slot.
func TestDisconnectCancelsTheRun(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			p := sampleParts(t)
			g := newGated(p.deps.Docs)
			p.deps.Docs = g
			s := newServer(t, Config{Pipeline: p.pipeline(t), MaxRuns: 1})
			ctx, cancel := context.WithCancel(t.Context())
			c := call{path: "/v1/ask", body: map[string]any{"question": qFactual}, ctx: ctx}
			if stream {
				c.header = sse
			}
			errc := make(chan error, 1)
			go func() {
				req, _ := http.NewRequestWithContext(ctx, "POST", s.url+c.path, strings.NewReader(`{"question": "`+qFactual+`"}`))
				req.Header.Set("Content-Type", "application/json")
				if stream {
					req.Header.Set("Accept", "text/event-stream")
				}
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					_, err = resp.Body.Read(make([]byte, 1<<16))
					for err == nil {
						_, err = resp.Body.Read(make([]byte, 1<<16))
					}
					resp.Body.Close()
				}
				errc <- err
			}()
			g.waitEntered(t)
			cancel()
			select {
			case err := <-g.ended:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the store saw %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the run went on after its client left")
			}
			<-errc
			waitFor(t, "the run slot to be free", func() bool { return len(s.sem) == 0 })
			waitFor(t, "the log line", func() bool { return strings.Contains(s.logs.String(), "client went away") })
		})
	}
}

// An incoming traceparent continues the caller's trace: the run span has
// its trace id, under the server span, under the caller's span.
func TestTraceparentContinuesTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	p := sampleParts(t)
	p.opts.TracerProvider = tp
	s := newServer(t, Config{Pipeline: p.pipeline(t), TracerProvider: tp, Propagator: propagation.TraceContext{}})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual},
		header: map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"}}), &res)
	if res.TraceID != traceID {
		t.Errorf("result trace id %s, want the caller's %s", res.TraceID, traceID)
	}
	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	byID := map[string]sdktrace.ReadOnlySpan{}
	var run sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		byID[sp.SpanContext().SpanID().String()] = sp
		if sp.Name() == "adaptrag.run" {
			run = sp
		}
	}
	if run == nil {
		t.Fatal("no run span")
	}
	if run.SpanContext().TraceID().String() != traceID {
		t.Errorf("run span trace %s", run.SpanContext().TraceID())
	}
	server := byID[run.Parent().SpanID().String()]
	if server == nil || server.Name() != "POST /v1/ask" || server.Parent().SpanID().String() != parentID || !server.Parent().IsRemote() {
		t.Fatalf("the run span's parent is %v, want the server span under the caller's span %s", server, parentID)
	}
	// Without a traceparent, a new trace.
	wantOK(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}}), &res)
	if res.TraceID == "" || res.TraceID == traceID {
		t.Errorf("trace id %q", res.TraceID)
	}
}

// A model that streams sends its answer as many token events, through
// langchaingo and the loopback OpenAI-wire server.
func TestStreamTokensFromModel(t *testing.T) {
	const answer = "无理由退货须在签收后 7 天内发起，质量问题 15 天内 [2]。"
	srv := llmtest.NewServer(t, llmtest.Text(answer))
	gen, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, APIKey: "test", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p := sampleParts(t)
	p.deps.Generator = gen
	s := newServer(t, Config{Pipeline: p.pipeline(t)})
	var pieces []string
	var res result
	var generate nodeEvent
	for _, ev := range allEvents(t, s.do(t, call{path: "/v1/ask", body: map[string]any{"question": qFactual}, header: sse})) {
		switch ev.name {
		case "token":
			var tk tokenEvent
			_ = json.Unmarshal(ev.data, &tk)
			pieces = append(pieces, tk.Text)
		case "node":
			var n nodeEvent
			_ = json.Unmarshal(ev.data, &n)
			if n.Node == adaptrag.NodeGenerate {
				generate = n
			}
		case "result":
			_ = json.Unmarshal(ev.data, &res)
		}
	}
	if len(pieces) < 5 || strings.Join(pieces, "") != answer {
		t.Errorf("%d token events %q, want the answer in pieces", len(pieces), pieces)
	}
	if res.AnsweredBy != string(state.ByModel) || res.Answer != answer || len(res.Citations) != 1 {
		t.Errorf("result by %s: %q %+v", res.AnsweredBy, res.Answer, res.Citations)
	}
	if generate.TokensIn == 0 || generate.TokensOut == 0 {
		t.Errorf("generate node event %+v lacks tokens", generate)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream {
		t.Errorf("%d model requests, streamed %v", len(reqs), len(reqs) == 1 && reqs[0].Stream)
	}
}

// Serve finishes the requests in flight when its context ends, within the
// grace period, and refuses new connections meanwhile.
func TestGracefulShutdown(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s, err := New(Config{Pipeline: p.pipeline(t), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, 10*time.Second) }()
	type reply struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan reply, 1)
	go func() {
		resp, err := http.Post(url+"/v1/ask", "application/json", strings.NewReader(`{"question": "`+qFactual+`"}`))
		if err != nil {
			inflight <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, err = fmt.Fprint(&b, must(json.NewDecoder(resp.Body)))
		inflight <- reply{resp.StatusCode, b.String(), err}
	}()
	g.waitEntered(t)
	stop() // SIGTERM
	waitFor(t, "draining", func() bool { return s.draining.Load() })
	waitFor(t, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(g.release)
	r := <-inflight
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, "answer") {
		t.Errorf("in-flight request: %d %v %.80s", r.status, r.err, r.body)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Requests still running after the grace period are cut and their runs
// cancelled.
func TestShutdownGraceRunsOut(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s, err := New(Config{Pipeline: p.pipeline(t), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, 100*time.Millisecond) }()
	var wg sync.WaitGroup
	wg.Go(func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/v1/ask", "application/json", strings.NewReader(`{"question": "`+qFactual+`"}`))
		if err == nil {
			resp.Body.Close()
		}
	})
	g.waitEntered(t)
	stop()
	if err := <-served; err == nil {
		t.Error("Serve returned nil after cutting a request")
	}
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the run ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut request's run went on")
	}
	wg.Wait()
}

func must(dec *json.Decoder) map[string]any {
	var m map[string]any
	_ = dec.Decode(&m)
	return m
}

// Through Serve, with its read timeout, a client that leaves long after
// its request was read still cancels its run, and the run is not cut
// before.
func TestDisconnectNoticedAfterTheReadTimeout(t *testing.T) {
	p := sampleParts(t)
	g := newGated(p.deps.Docs)
	p.deps.Docs = g
	s, err := New(Config{Pipeline: p.pipeline(t), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	s.readTimeout = 50 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go s.Serve(ctx, ln, time.Second)
	cctx, cancel := context.WithCancel(t.Context())
	go func() {
		req, _ := http.NewRequestWithContext(cctx, "POST", "http://"+ln.Addr().String()+"/v1/ask", strings.NewReader(`{"question": "`+qFactual+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	g.waitEntered(t)
	time.Sleep(200 * time.Millisecond) // well past the read timeout
	select {
	case err := <-g.ended:
		t.Fatalf("the run ended before its client left: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-g.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the store saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run went on after its client left")
	}
}
