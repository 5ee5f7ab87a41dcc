package service

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a ResponseWriter that records each write and flush, with
// when the flush happened; it can be told to fail writes.
type recorder struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	pending strings.Builder
	flushes []string // what each flush sent
	at      []time.Time
	fail    error
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = code
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return 0, r.fail
	}
	r.pending.Write(b)
	return len(b), nil
}

func (r *recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushes = append(r.flushes, r.pending.String())
	r.at = append(r.at, time.Now())
	r.pending.Reset()
}

func (r *recorder) snapshot() ([]string, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.flushes...), append([]time.Time(nil), r.at...)
}

// TestSSECoalescesBurst checks that events produced together leave in one
// write and flush, in order, complete, and that the final event does not
// wait for the window.
func TestSSECoalescesBurst(t *testing.T) {
	rec := newRecorder()
	out := newSSE(rec, time.Hour) // only "last" or close can flush
	for i := range 5 {
		if err := out.send("node", nodeEvent{Node: fmt.Sprint("n", i), Step: i}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := rec.snapshot(); len(f) != 0 {
		t.Fatalf("flushed before the final event: %q", f)
	}
	if rec.status != http.StatusOK || !strings.HasPrefix(rec.header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("status %d, content type %q", rec.status, rec.header.Get("Content-Type"))
	}
	if err := out.last("result", map[string]string{"answer": "line one\nline two"}); err != nil {
		t.Fatal(err)
	}
	f, _ := rec.snapshot()
	if len(f) != 1 {
		t.Fatalf("%d flushes, want 1: %q", len(f), f)
	}
	var want strings.Builder
	for i := range 5 {
		fmt.Fprintf(&want, "event: node\ndata: {\"node\":\"n%d\",\"step\":%d,\"duration_ms\":0,\"tokens_in\":0,\"tokens_out\":0}\n\n", i, i)
	}
	want.WriteString("event: result\ndata: {\"answer\":\"line one\\nline two\"}\n\n")
	if f[0] != want.String() {
		t.Errorf("stream:\n%s\nwant:\n%s", f[0], want.String())
	}
	if err := out.close(); err != nil {
		t.Fatal(err)
	}
	if f, _ := rec.snapshot(); len(f) != 1 {
		t.Errorf("close flushed again with nothing queued: %q", f)
	}
}

// TestSSEFlushesWithinWindow checks that an event followed by silence (a
// slow model between tokens) is flushed a window after it, not held until
// the next event or the end.
func TestSSEFlushesWithinWindow(t *testing.T) {
	const window = 5 * time.Millisecond
	rec := newRecorder()
	out := newSSE(rec, window)
	defer out.close()
	for round := range 3 {
		sent := time.Now()
		if err := out.send("token", tokenEvent{Node: "generate", Text: fmt.Sprint("piece ", round)}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for {
			f, at := rec.snapshot()
			if len(f) == round+1 {
				if d := at[round].Sub(sent); d < window/2 {
					t.Errorf("round %d: flushed after %v, before the window (%v) could gather more", round, d, window)
				} else if d > window+100*time.Millisecond {
					t.Errorf("round %d: flushed %v after the event, window %v", round, d, window)
				}
				if !strings.Contains(f[round], fmt.Sprint("piece ", round)) {
					t.Errorf("round %d flushed %q", round, f[round])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: event not flushed 2 s after it was sent", round)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(3 * window) // silence, as between a slow model's tokens
	}
}

// TestSSECloseFlushes checks that close sends what is queued at once.
func TestSSECloseFlushes(t *testing.T) {
	rec := newRecorder()
	out := newSSE(rec, time.Hour)
	if err := out.send("node", nodeEvent{Node: "plan"}); err != nil {
		t.Fatal(err)
	}
	if err := out.close(); err != nil {
		t.Fatal(err)
	}
	if f, _ := rec.snapshot(); len(f) != 1 || !strings.Contains(f[0], `"node":"plan"`) {
		t.Errorf("after close: %q", f)
	}
	if err := out.send("node", nodeEvent{Node: "late"}); !errors.Is(err, errSSEClosed) {
		t.Errorf("an event after close: %v, want errSSEClosed", err)
	}
}

// TestSSEWriteErrorReported checks that a write failing in the timer's
// flush (the client went away) is returned by the next send, so the run is
// cancelled.
func TestSSEWriteErrorReported(t *testing.T) {
	rec := newRecorder()
	gone := errors.New("connection reset")
	rec.fail = gone
	out := newSSE(rec, time.Millisecond)
	defer out.close()
	if err := out.send("node", nodeEvent{Node: "a"}); err != nil {
		t.Fatalf("first send: %v (the write happens later)", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := out.send("node", nodeEvent{Node: "b"})
		if errors.Is(err, gone) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("send still returns %v 2 s after a failed write", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSSESlowStreamOverHTTP serves a stream whose second event comes long
// after its first, over a real connection: the client reads the first event
// within a few milliseconds of its sending, long before the second.
func TestSSESlowStreamOverHTTP(t *testing.T) {
	const pause = 300 * time.Millisecond
	sent := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := newSSE(w, sseCoalesce)
		defer out.close()
		sent <- time.Now()
		_ = out.send("token", tokenEvent{Node: "generate", Text: "first"})
		time.Sleep(pause)
		_ = out.last("result", map[string]string{"answer": "done"})
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	got := time.Since(<-sent)
	if line != "event: token\n" {
		t.Fatalf("first line %q", line)
	}
	if got > pause/2 {
		t.Errorf("first event read %v after it was sent; the next comes %v after it", got, pause)
	}
	t.Logf("first event read %v after it was sent (window %v)", got, sseCoalesce)
	rest := new(strings.Builder)
	if _, err := bufio.NewReader(br).WriteTo(rest); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rest.String(), "event: result\n") {
		t.Errorf("rest of the stream: %q", rest.String())
	}
}
