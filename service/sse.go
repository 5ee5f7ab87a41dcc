package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/adaptrag/adaptrag/api"
)

// sseCoalesce is how long an event may wait for the ones produced with it
// before they are written and flushed together. A run's nodes finish within
// microseconds of each other; a write and a flush per event cost more than
// the event (a syscall and a chunk each), and a reader cannot tell 2 ms.
const sseCoalesce = 2 * time.Millisecond

// sseWriter writes Server-Sent Events. Events are buffered and written with
// one write and one flush at most window after the first of them, so events
// produced together travel together while a slow stream still sees each
// event within window; a final event (see last) and close flush at once.
// Headers are sent with the first event, so an error found before it can
// still be an ordinary JSON error response with its status.
//
// send and last are called from the handler's goroutine; the timer flushes
// from its own, serialised by mu. close must be called before the handler
// returns, after which the ResponseWriter is never touched again.
type sseWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	window  time.Duration // zero: flush every event
	buf     bytes.Buffer  // events written, not yet flushed
	enc     *json.Encoder // encodes into buf
	timer   *time.Timer   // armed while buf waits for its flush
	armed   bool
	started bool
	closed  bool
	err     error // the first write error: the client is gone
}

func newSSE(w http.ResponseWriter, window time.Duration) *sseWriter {
	s := &sseWriter{w: w, rc: http.NewResponseController(w), window: window}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

// send queues one event whose data is v as one line of JSON; it is flushed
// within the window. It returns the error of an earlier write, if any (the
// client is gone).
func (s *sseWriter) send(event string, v any) error { return s.write(event, v, false) }

// last sends a final event ("result", "error") and flushes it with any
// queued ones at once.
func (s *sseWriter) last(event string, v any) error { return s.write(event, v, true) }

func (s *sseWriter) write(event string, v any, now bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errSSEClosed
	}
	mark := s.buf.Len()
	s.buf.WriteString("event: ")
	s.buf.WriteString(event)
	s.buf.WriteString("\ndata: ")
	// The encoder writes the value and a newline, or nothing on failure;
	// JSON escapes every other newline, so data is one line.
	if err := s.enc.Encode(v); err != nil {
		s.buf.Truncate(mark)
		return err
	}
	s.buf.WriteByte('\n')
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // ask proxies not to buffer
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	if now || s.window <= 0 {
		s.flushLocked()
		return s.err
	}
	if !s.armed {
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(s.window, s.tick)
		} else {
			s.timer.Reset(s.window)
		}
	}
	return nil
}

// tick is the timer's flush.
func (s *sseWriter) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	if !s.closed {
		s.flushLocked()
	}
}

// flushLocked writes and flushes the queued events. s.mu must be held.
func (s *sseWriter) flushLocked() {
	if s.armed && s.timer != nil {
		s.timer.Stop()
		s.armed = false
	}
	if s.buf.Len() == 0 || s.err != nil {
		s.buf.Reset()
		return
	}
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	if err == nil {
		err = s.rc.Flush()
	}
	s.err = err
}

// close flushes what is queued and stops the timer; the writer is done. It
// returns the write error, if any.
func (s *sseWriter) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.flushLocked()
		s.closed = true
	}
	return s.err
}

// errSSEClosed reports an event sent after close: a handler bug.
var errSSEClosed = errors.New("service: event sent after the stream was closed")

// Payloads of the events.
type (
	nodeEvent  = api.NodeEvent
	tokenEvent = api.TokenEvent
)
