package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/mcpserver"
)

// rawSession is a server on stdio-like pipes driven with raw JSON-RPC
// lines, as a client nobody on this project wrote sends them.
type rawSession struct {
	t    testing.TB
	in   *io.PipeWriter
	out  chan []byte // the server's lines, read as they come so it never blocks writing
	done chan error
	next int
}

func newRawSession(t testing.TB, c mcpserver.Config) *rawSession {
	t.Helper()
	k, p := samplePipeline(t)
	if c.KB == nil {
		c.KB = k
	}
	srv, err := mcpserver.New(p, c)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawSession{t: t, in: inW, out: make(chan []byte, 1024), done: make(chan error, 1), next: 1000}
	go func() {
		defer close(rs.out)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			b, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			rs.out <- b
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		rs.done <- srv.Run(ctx, &mcpserver.StdioTransport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-rs.done:
		case <-time.After(5 * time.Second):
			t.Error("the session did not end after its input closed")
		}
	})
	rs.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if _, ok := rs.until(`0`); !ok {
		t.Fatal("no answer to initialize")
	}
	rs.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return rs
}

func (rs *rawSession) send(line string) {
	rs.t.Helper()
	if _, err := io.WriteString(rs.in, line+"\n"); err != nil {
		rs.t.Fatalf("write %.80q: %v (the server is gone)", line, err)
	}
}

// rpcMessage is any JSON-RPC message the server writes.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// until reads messages until the response with id (raw JSON) and returns
// every message read, false when the output ended or 10 s passed.
func (rs *rawSession) until(id string) ([]rpcMessage, bool) {
	rs.t.Helper()
	var got []rpcMessage
	deadline := time.After(10 * time.Second)
	for {
		select {
		case b, ok := <-rs.out:
			if !ok {
				return got, false
			}
			var m rpcMessage
			if err := json.Unmarshal(b, &m); err != nil {
				rs.t.Fatalf("the server wrote a line that is not JSON: %q", b)
			}
			got = append(got, m)
			if string(m.ID) == id {
				return got, true
			}
		case <-deadline:
			return got, false
		}
	}
}

// alive checks that the server still answers a ping.
func (rs *rawSession) alive() bool {
	rs.t.Helper()
	rs.next++
	id := fmt.Sprint(rs.next)
	rs.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	_, ok := rs.until(id)
	return ok
}

// listMethods are the methods agents call first, each with the three
// shapes of "no params".
var listMethods = []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"}

var emptyParams = map[string]string{"missing": ``, "null": `,"params":null`, "empty": `,"params":{}`}

// Regression: each of these killed the process (a nil dereference in the
// tracing middleware, on a goroutine of the SDK's).
func TestRawListsWithoutParamsOverStdio(t *testing.T) {
	rs := newRawSession(t, mcpserver.Config{})
	for _, m := range listMethods {
		for name, params := range emptyParams {
			rs.next++
			id := fmt.Sprint(rs.next)
			rs.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + m + `"` + params + `}`)
			got, ok := rs.until(id)
			if !ok {
				t.Fatalf("%s with %s params: no answer", m, name)
			}
			last := got[len(got)-1]
			if last.Error != nil || len(last.Result) == 0 {
				t.Errorf("%s with %s params: %+v", m, name, last.Error)
			}
		}
	}
	rs.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	rs.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":null}`)
	if !rs.alive() {
		t.Fatal("the server stopped answering after notifications/roots/list_changed without params")
	}
}

// Regression: a line that is not a JSON-RPC message ended the session
// (and "adaptrag mcp" with it); now it gets an error and the session
// goes on.
func TestRawGarbageOverStdio(t *testing.T) {
	rs := newRawSession(t, mcpserver.Config{})
	for _, line := range []string{`garbage{`, `{"foo":1}`, `[]`, `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, `5`, `"x"`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`} {
		rs.send(line)
		if !rs.alive() {
			t.Fatalf("the server stopped answering after %q", line)
		}
	}
	rs.send(strings.Repeat("x", 5<<20)) // beyond the 4 MiB line limit
	if !rs.alive() {
		t.Fatal("the server stopped answering after an oversized line")
	}
}

// Regression: a bad cursor answered with error code 0.
func TestRawBadCursor(t *testing.T) {
	rs := newRawSession(t, mcpserver.Config{})
	for i, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		id := fmt.Sprint(i + 1)
		rs.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + m + `","params":{"cursor":"not-a-cursor"}}`)
		got, ok := rs.until(id)
		if !ok {
			t.Fatalf("%s: no answer", m)
		}
		if e := got[len(got)-1].Error; e == nil || e.Code != -32602 {
			t.Errorf("%s with a bad cursor: error %+v, want code -32602", m, e)
		}
	}
}

// Regression: tenant-scoped results were marked cacheScope public or "".
func TestRawCacheScope(t *testing.T) {
	rs := newRawSession(t, mcpserver.Config{})
	want := map[string]string{
		`"method":"tools/list"`:     "private",
		`"method":"resources/list"`: "private",
		`"method":"resources/read","params":{"uri":"adaptrag://docs/admin/meeting_rooms.csv"}`: "private",
		`"method":"resources/templates/list"`:                                                  "public",
	}
	i := 0
	for req, scope := range want {
		i++
		id := fmt.Sprint(i)
		rs.send(`{"jsonrpc":"2.0","id":` + id + `,` + req + `}`)
		got, ok := rs.until(id)
		if !ok {
			t.Fatalf("%s: no answer", req)
		}
		var r struct {
			CacheScope string `json:"cacheScope"`
		}
		last := got[len(got)-1]
		if last.Error != nil {
			t.Fatalf("%s: %+v", req, last.Error)
		}
		_ = json.Unmarshal(last.Result, &r)
		if r.CacheScope != scope {
			t.Errorf("%s: cacheScope %q, want %q", req, r.CacheScope, scope)
		}
	}
}

// postRaw posts one raw JSON-RPC body to an MCP endpoint.
func postRaw(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post %.80q: %v (the server is gone)", body, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Regression: the same requests over streamable HTTP panicked on the
// SDK's goroutine, where no HTTP recovery reaches, and took the whole
// server down.
func TestRawListsWithoutParamsOverHTTP(t *testing.T) {
	k, p := samplePipeline(t)
	srv, err := mcpserver.New(p, mcpserver.Config{KB: k})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(nil))
	defer hs.Close()
	for _, m := range listMethods {
		for name, params := range emptyParams {
			status, body := postRaw(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"`+m+`"`+params+`}`)
			var msg rpcMessage
			if err := json.Unmarshal(body, &msg); status != 200 || err != nil || msg.Error != nil || len(msg.Result) == 0 {
				t.Errorf("%s with %s params: status %d, body %s", m, name, status, body)
			}
		}
	}
	for _, params := range []string{``, `,"params":null`} {
		if status, body := postRaw(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"`+params+`}`); status >= 500 {
			t.Errorf("roots/list_changed%s: status %d %s", params, status, body)
		}
	}
	if status, body := postRaw(t, hs.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status != 200 || !bytes.Contains(body, []byte(`"result"`)) {
		t.Fatalf("ping after: %d %s", status, body)
	}
}
