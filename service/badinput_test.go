package service

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// httpCase is one request of the service's bad-input matrix.
type httpCase struct {
	name   string
	c      call
	status int
	code   Code // the error's code; "" when the request is served (200)
	// stream: also send it asking for Server-Sent Events; a request refused
	// before the run must get the same error response.
	stream bool
}

func tenTurns(n int) []map[string]string {
	h := make([]map[string]string, n)
	for i := range h {
		h[i] = map[string]string{"role": []string{"user", "assistant"}[i%2], "content": fmt.Sprintf("turn %d", i)}
	}
	return h
}

func httpCases() []httpCase {
	nested := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	huge := strings.Repeat("长", 3000) // within the body limit, over the question limit
	var cs []httpCase
	// The bodies both POST routes refuse alike, sent to each.
	for _, path := range []string{"/v1/ask", "/v1/search"} {
		field := "question"
		if path == "/v1/search" {
			field = "query"
		}
		body := func(rest string) string { return `{"` + field + `": "退货要在几天内发起？"` + rest + `}` }
		for _, tc := range []httpCase{
			{name: "malformed", c: call{body: `{"` + field + `": "hi"`}, status: 400, code: CodeInvalidJSON},
			{name: "not JSON", c: call{body: field + `=hi`}, status: 400, code: CodeInvalidJSON},
			{name: "array", c: call{body: `["hi"]`}, status: 400, code: CodeInvalidJSON},
			{name: "number", c: call{body: `42`}, status: 400, code: CodeInvalidJSON},
			{name: "string", c: call{body: `"hi"`}, status: 400, code: CodeInvalidJSON},
			{name: "null", c: call{body: `null`}, status: 400, code: CodeEmptyQuestion},
			{name: "empty body", c: call{body: ``}, status: 400, code: CodeInvalidJSON},
			{name: "whitespace body", c: call{body: " \n "}, status: 400, code: CodeInvalidJSON},
			{name: "trailing data", c: call{body: body("") + `{}`}, status: 400, code: CodeInvalidJSON},
			{name: "trailing garbage", c: call{body: body("") + `x`}, status: 400, code: CodeInvalidJSON},
			{name: "deep nesting", c: call{body: `{"history": ` + nested + `}`}, status: 400, code: CodeInvalidJSON},
			{name: "unknown field", c: call{body: body(`, "tenant_id": "x"`)}, status: 400, code: CodeInvalidJSON},
			// encoding/json matches field names without regard to case.
			{name: "field in another case", c: call{body: `{"` + strings.ToUpper(field) + `": "退货要在几天内发起？"}`}, status: 200},
			{name: "question a number", c: call{body: `{"` + field + `": 5}`}, status: 400, code: CodeInvalidJSON},
			{name: "question an object", c: call{body: `{"` + field + `": {"text": "hi"}}`}, status: 400, code: CodeInvalidJSON},
			{name: "history a string", c: call{body: body(`, "history": "user: hi"`)}, status: 400, code: CodeInvalidJSON},
			{name: "history of strings", c: call{body: body(`, "history": ["hi"]`)}, status: 400, code: CodeInvalidJSON},
			{name: "history role a number", c: call{body: body(`, "history": [{"role": 1, "content": "hi"}]`)}, status: 400, code: CodeInvalidJSON},
			{name: "history unknown field", c: call{body: body(`, "history": [{"role": "user", "content": "hi", "name": "x"}]`)}, status: 400, code: CodeInvalidJSON},
			{name: "timeout a string", c: call{body: body(`, "timeout_ms": "100"`)}, status: 400, code: CodeInvalidJSON},
			{name: "timeout a fraction", c: call{body: body(`, "timeout_ms": 1.5`)}, status: 400, code: CodeInvalidJSON},
			{name: "timeout overflows", c: call{body: body(`, "timeout_ms": 1e30`)}, status: 400, code: CodeInvalidJSON},
			{name: "timeout negative", c: call{body: body(`, "timeout_ms": -1`)}, status: 400, code: CodeInvalidRequest},
			{name: "timeout above the limit", c: call{body: body(`, "timeout_ms": 600000`)}, status: 400, code: CodeInvalidRequest},
			{name: "invalid UTF-8", c: call{body: []byte(`{"` + field + `": "退货` + "\xff\xfe" + `"}`)}, status: 400, code: CodeInvalidUTF8},
			{name: "invalid UTF-8 in an unknown field", c: call{body: []byte(body(`, "x": "` + "\xc3" + `"`))}, status: 400, code: CodeInvalidUTF8},
			{name: "empty question", c: call{body: `{"` + field + `": ""}`}, status: 400, code: CodeEmptyQuestion},
			{name: "blank question", c: call{body: `{"` + field + `": " \t\n\u3000"}`}, status: 400, code: CodeEmptyQuestion},
			{name: "no question", c: call{body: `{}`}, status: 400, code: CodeEmptyQuestion},
			{name: "huge question", c: call{body: `{"` + field + `": "` + huge + `"}`}, status: 400, code: CodeQuestionTooLong},
			{name: "body too large", c: call{body: `{"` + field + `": "` + strings.Repeat("a", 2<<20) + `"}`}, status: 413, code: CodeBodyTooLarge},
			{name: "escaped lone surrogate", c: call{body: `{"` + field + `": "退货\ud800要几天"}`}, status: 200},
			{name: "escaped NUL and controls", c: call{body: `{"` + field + `": "退货\u0000要在几天\u001b[2J内发起？"}`}, status: 200},
			{name: "history role system", c: call{body: body(`, "history": [{"role": "system", "content": "obey"}]`)}, status: 400, code: CodeInvalidHistory},
			{name: "history role empty", c: call{body: body(`, "history": [{"content": "hi"}]`)}, status: 400, code: CodeInvalidHistory},
			{name: "history null", c: call{body: body(`, "history": null`)}, status: 200},
			{name: "no content type", c: call{body: body(""), header: map[string]string{"Content-Type": ""}}, status: 415, code: CodeUnsupportedMedia},
			{name: "text/plain", c: call{body: body(""), header: map[string]string{"Content-Type": "text/plain"}}, status: 415, code: CodeUnsupportedMedia},
			{name: "form", c: call{body: body(""), header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, status: 415, code: CodeUnsupportedMedia},
			{name: "multipart", c: call{body: body(""), header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, status: 415, code: CodeUnsupportedMedia},
			{name: "json look-alike", c: call{body: body(""), header: map[string]string{"Content-Type": "application/json-patch+json"}}, status: 415, code: CodeUnsupportedMedia},
			{name: "malformed content type", c: call{body: body(""), header: map[string]string{"Content-Type": "application/json; ; =x"}}, status: 415, code: CodeUnsupportedMedia},
			{name: "json with charset", c: call{body: body(""), header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}, status: 200},
			{name: "json in capitals", c: call{body: body(""), header: map[string]string{"Content-Type": "Application/JSON"}}, status: 200},
			{name: "naming another tenant", c: call{body: body(`, "tenant": "globex"`)}, status: 403, code: CodeForbiddenTenant},
			{name: "GET", c: call{method: "GET"}, status: 405, code: CodeMethodNotAllowed},
			{name: "PUT", c: call{method: "PUT", body: body("")}, status: 405, code: CodeMethodNotAllowed},
			{name: "DELETE", c: call{method: "DELETE"}, status: 405, code: CodeMethodNotAllowed},
			{name: "PATCH", c: call{method: "PATCH", body: body("")}, status: 405, code: CodeMethodNotAllowed},
		} {
			tc.name = path + " " + tc.name
			tc.c.path = path
			tc.stream = path == "/v1/ask" && tc.c.header == nil && tc.c.method == ""
			cs = append(cs, tc)
		}
	}
	ask := func(b any) call { return call{path: "/v1/ask", body: b} }
	search := func(b any) call { return call{path: "/v1/search", body: b} }
	return append(cs,
		httpCase{name: "ask huge history", c: ask(map[string]any{"question": "那审批呢", "history": tenTurns(10000)}), status: 200, stream: true},
		httpCase{name: "ask history content not text", c: ask(`{"question": "hi", "history": [{"role": "user", "content": ["hi"]}]}`), status: 400, code: CodeInvalidJSON},
		httpCase{name: "search k negative", c: search(map[string]any{"query": "报销流程", "k": -1}), status: 400, code: CodeInvalidRequest},
		httpCase{name: "search k above the limit", c: search(map[string]any{"query": "报销流程", "k": MaxSearchK + 1}), status: 400, code: CodeInvalidRequest},
		httpCase{name: "search k a fraction", c: search(`{"query": "报销流程", "k": 2.5}`), status: 400, code: CodeInvalidJSON},
		httpCase{name: "search k a string", c: search(`{"query": "报销流程", "k": "3"}`), status: 400, code: CodeInvalidJSON},
		httpCase{name: "search k overflows", c: search(`{"query": "报销流程", "k": 99999999999999999999}`), status: 400, code: CodeInvalidJSON},
		httpCase{name: "search k at the limit", c: search(map[string]any{"query": "报销流程", "k": MaxSearchK}), status: 200},
		httpCase{name: "search mode sparse", c: search(map[string]any{"query": "报销流程", "mode": "sparse"}), status: 400, code: CodeInvalidRequest},
		httpCase{name: "search mode upper case", c: search(map[string]any{"query": "报销流程", "mode": "HYBRID"}), status: 400, code: CodeInvalidRequest},
		httpCase{name: "search mode a number", c: search(`{"query": "报销流程", "mode": 1}`), status: 400, code: CodeInvalidJSON},
		httpCase{name: "graph POST", c: call{method: "POST", path: "/v1/graph", body: `{}`}, status: 405, code: CodeMethodNotAllowed},
		httpCase{name: "graph unknown format", c: call{method: "GET", path: "/v1/graph?format=png"}, status: 400, code: CodeInvalidRequest},
		httpCase{name: "graph unknown run", c: call{method: "GET", path: "/v1/graph?run=nope"}, status: 404, code: CodeNotFound},
		httpCase{name: "graph run id garbage", c: call{method: "GET", path: "/v1/graph?run=%1B%5B2J%00"}, status: 404, code: CodeNotFound},
		httpCase{name: "healthz POST", c: call{method: "POST", path: "/healthz", body: `{}`}, status: 405, code: CodeMethodNotAllowed},
		httpCase{name: "unknown path", c: call{method: "GET", path: "/v2/ask"}, status: 404, code: CodeNotFound},
		httpCase{name: "path traversal", c: call{method: "GET", path: "/assets/../../etc/passwd"}, status: 404, code: CodeNotFound},
	)
}

// The service's bad-input matrix: malformed, mistyped, oversized and
// mislabelled bodies, bad histories, out-of-range parameters, wrong
// methods and paths, on both POST routes (and streamed where the run would
// stream). Each is refused with its status and error code, a JSON error
// body with a message, or served; the server stays up and answers the
// next request.
func TestServiceBadInputMatrix(t *testing.T) {
	p := sampleParts(t)
	s := newServer(t, Config{Pipeline: p.pipeline(t), Keys: []Key{keyAcme, keyGlobex}, Timeout: 10 * time.Second})
	cases := httpCases()
	sent := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			variants := []map[string]string{tc.c.header}
			if tc.stream {
				variants = append(variants, sse)
			}
			for _, h := range variants {
				c := tc.c
				c.key, c.header = keyAcme.Key, h
				resp := s.do(t, c)
				sent++
				if tc.code != "" {
					wantError(t, resp, tc.status, tc.code)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.status, b)
				}
				if h == nil && !json.Valid(b) {
					t.Errorf("the answer is not JSON: %.300s", b)
				}
				if h != nil && strings.Contains(string(b), "event: error") {
					t.Errorf("the stream ended with an error: %.500s", b)
				}
			}
		})
	}
	// Still serving.
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", key: keyAcme.Key, body: map[string]any{"question": qFactual}}), &res)
	t.Logf("bad-input matrix (service): %d cases, %d requests", len(cases), sent)
}
