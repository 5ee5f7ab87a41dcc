package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is a newline-delimited JSON-RPC transport over a reader
// and a writer (a process's stdin and stdout) that survives bad input. The
// SDK's own IOTransport ends the session at the first line that is not a
// JSON-RPC message; this one answers such a line with a JSON-RPC error
// (-32700 for a line that is not JSON, -32600 for JSON that is not a
// message, a batch array, or a line longer than MaxLineBytes) and reads
// on. Only the end of the input ends the session, once the requests read
// before it are answered (or DrainTimeout has passed).
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes bounds one message (default
	// mcp.DefaultMaxRequestBodyBytes, 4 MiB).
	MaxLineBytes int
	// DrainTimeout bounds the wait, at the end of the input, for the
	// answers to the requests still running (default one minute).
	DrainTimeout time.Duration
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	drain := t.DrainTimeout
	if drain <= 0 {
		drain = time.Minute
	}
	out := &lineWriter{w: t.Writer, pending: map[string]bool{}, idle: make(chan struct{}, 1)}
	pr, pw := io.Pipe()
	go func() {
		filterLines(t.Reader, pw, out, limit)
		out.wait(drain)
		pw.CloseWithError(io.EOF)
	}()
	inner := &mcp.IOTransport{Reader: pr, Writer: nopCloser{out}, MaxLineLength: -1}
	return inner.Connect(ctx)
}

// filterLines copies the valid messages of r to pw, one per line, and
// answers the others on out, until the end of r.
func filterLines(r io.Reader, pw *io.PipeWriter, out *lineWriter, limit int) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 {
				tooLong, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		switch {
		case tooLong:
			out.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message exceeds %d bytes", limit))
		case len(bytes.TrimSpace(line)) > 0:
			if id, ok := checkLine(bytes.TrimSpace(line), out); ok {
				if id != "" {
					out.expect(id)
				}
				msg := append(bytes.TrimSpace(line), '\n')
				if _, werr := pw.Write(msg); werr != nil {
					return
				}
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			return
		}
	}
}

// checkLine reports whether line is one JSON-RPC message the SDK can
// read, and the id of a request (to be answered); if not, it answers it on
// out.
func checkLine(line []byte, out *lineWriter) (string, bool) {
	if !json.Valid(line) {
		out.reply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return "", false
	}
	if line[0] == '[' {
		out.reply(nil, jsonrpc.CodeInvalidRequest, "batches (JSON arrays) are not supported; send one message per line")
		return "", false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		out.reply(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return "", false
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		return idKey(req.ID.Raw()), true
	}
	return "", true
}

// idKey is the key of a JSON-RPC id in the pending set.
func idKey(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// lineWriter writes whole lines to w, one at a time, so that the SDK's
// messages and the filter's replies never interleave, and keeps the ids of
// the requests not yet answered.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	pending map[string]bool
	idle    chan struct{} // signalled when pending empties
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		lines := l.buf[:i+1]
		if len(l.pending) > 0 {
			l.answered(lines)
		}
		if _, err := l.w.Write(lines); err != nil {
			l.buf = l.buf[:0]
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	return len(p), nil
}

// answered removes from pending the ids of the responses among lines.
func (l *lineWriter) answered(lines []byte) {
	for _, line := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || (m.Result == nil && m.Error == nil) {
			continue
		}
		var id any
		if json.Unmarshal(m.ID, &id) == nil {
			delete(l.pending, idKey(id))
		}
	}
	if len(l.pending) == 0 {
		select {
		case l.idle <- struct{}{}:
		default:
		}
	}
}

// expect adds a request id to pending.
func (l *lineWriter) expect(id string) {
	l.mu.Lock()
	l.pending[id] = true
	l.mu.Unlock()
}

// wait waits until every pending request is answered, at most d.
func (l *lineWriter) wait(d time.Duration) {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-l.idle:
		case <-deadline:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// reply writes a JSON-RPC error response with the given id (null when
// absent or not a valid id).
func (l *lineWriter) reply(id json.RawMessage, code int64, msg string) {
	var v any
	if len(id) > 0 && json.Unmarshal(id, &v) == nil {
		switch v.(type) {
		case string, float64:
		default:
			v = nil
		}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": v, "error": map[string]any{"code": code, "message": msg}})
	_, _ = l.Write(append(b, '\n'))
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
