package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingURL = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/`)

// serve starts "adaptrag serve" in-process on a free loopback port and
// returns its URL and a function that stops it (as SIGTERM does) and
// returns the exit status and the log.
func serve(t *testing.T, args ...string) (url string, stop func() (int, string)) {
	t.Helper()
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OLLAMA_HOST", "OPENAI_EMBEDDING_MODEL", "OLLAMA_EMBEDDING_MODEL", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		t.Setenv(k, "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }},
			append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := servingURL.FindStringSubmatch(errb.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case c := <-code:
			cancel()
			t.Fatalf("serve exited %d: %s", c, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			cancel()
		}
		select {
		case c := <-code:
			return c, errb.String()
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
		}
		return 0, ""
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return url, stop
}

func post(t *testing.T, url, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	url, stop := serve(t)
	if code, body := get(t, url+"/healthz"); code != 200 {
		t.Fatalf("healthz %d %s", code, body)
	}
	if code, body := get(t, url+"/readyz"); code != 200 || !strings.Contains(body, `"store":"ok"`) {
		t.Errorf("readyz %d %s", code, body)
	}
	code, res := post(t, url+"/v1/ask", "", `{"question": "退货要在几天内发起？"}`)
	if code != 200 || res["answer"] == "" || res["trace_id"] == "" || res["run_id"] == "" {
		t.Fatalf("ask %d %v", code, res)
	}
	if code, body := get(t, url+"/v1/graph?format=text&run="+res["run_id"].(string)); code != 200 || !strings.Contains(body, "path: __start__ -> decide") {
		t.Errorf("graph %d %s", code, body)
	}
	if code, body := get(t, url+"/metrics"); code != 200 || !strings.Contains(body, `adaptrag_runs_total{answered_by="extractive",outcome="ok",route="factual"} 1`) {
		t.Errorf("metrics %d lack the run", code)
	}
	if code, body := get(t, url+"/"); code != 200 || !strings.Contains(body, "<title>adaptrag</title>") {
		t.Errorf("page %d", code)
	}
	status, log := stop()
	if status != 0 || !strings.Contains(log, "no --auth") || !strings.Contains(log, "msg=stopped") {
		t.Errorf("exit %d, log:\n%s", status, log)
	}
}

func TestServeWithAuth(t *testing.T) {
	const key = "k-0123456789abcdefghij"
	file := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(file, []byte(`[{"key": "`+key+`", "tenant": "", "actor": "ops"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, "--auth", file, "--jaeger-ui", "http://localhost:16686")
	if code, _ := post(t, url+"/v1/ask", "", `{"question": "退货要在几天内发起？"}`); code != 401 {
		t.Errorf("no key: %d", code)
	}
	code, res := post(t, url+"/v1/ask", key, `{"question": "退货要在几天内发起？"}`)
	if code != 200 || res["answer"] == "" {
		t.Errorf("with the key: %d %v", code, res)
	}
	if code, body := get(t, url+"/ui/config.json"); code != 200 || !strings.HasPrefix(body, `{"auth":true,"jaeger_ui":"http://localhost:16686",`) ||
		!strings.Contains(body, `"max_question_runes":2000`) {
		t.Errorf("ui config %d %s", code, body)
	}
	status, log := stop()
	if status != 0 || strings.Contains(log, key) || !strings.Contains(log, "keys=1") {
		t.Errorf("exit %d, log:\n%s", status, log)
	}
}

func TestServeRefuses(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(bad, []byte(`[{"key": "short", "tenant": "a"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--addr", "0.0.0.0:8080"}, 2, "loopback only"},
		{[]string{"--addr", ":8080"}, 2, "every interface"},
		{[]string{"--addr", "192.0.2.7:8080"}, 2, "loopback only"},
		{[]string{"--addr", "nonsense"}, 2, "--addr"},
		{[]string{"--auth", bad}, 1, "shorter than"},
		{[]string{"--auth", bad + ".missing"}, 1, "no such file"},
		{[]string{"--jaeger-ui", "localhost:16686"}, 2, "not an http(s) URL"},
		{[]string{"--timeout", "0s"}, 2, "must be positive"},
		{[]string{"--max-runs", "0"}, 2, "must be positive"},
		{[]string{"extra"}, 2, "unexpected argument"},
	} {
		_, errs, code := cli(t, append([]string{"serve"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("serve %v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.msg, errs)
		}
	}
}
