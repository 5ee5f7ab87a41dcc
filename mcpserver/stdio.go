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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is a newline-delimited JSON-RPC transport over a reader
// and a writer (a process's stdin and stdout) that survives bad input. The
// SDK's own IOTransport ends the session at the first line that is not a
// JSON-RPC message; this one answers such a line with a JSON-RPC error
// (-32700 for a line that is not JSON, -32600 for JSON that is not a
// message, a batch array, or a line longer than MaxLineBytes) and reads
// on. Only the end of the input ends the session.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes bounds one message (default
	// mcp.DefaultMaxRequestBodyBytes, 4 MiB).
	MaxLineBytes int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	out := &lineWriter{w: t.Writer}
	pr, pw := io.Pipe()
	go filterLines(t.Reader, pw, out, limit)
	inner := &mcp.IOTransport{Reader: pr, Writer: nopCloser{out}, MaxLineLength: -1}
	return inner.Connect(ctx)
}

// filterLines copies the valid messages of r to pw, one per line, and
// answers the others on out. It closes pw at the end of r.
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
			if ok := checkLine(bytes.TrimSpace(line), out); ok {
				msg := append(bytes.TrimSpace(line), '\n')
				if _, werr := pw.Write(msg); werr != nil {
					return
				}
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			pw.CloseWithError(io.EOF)
			return
		}
	}
}

// checkLine reports whether line is one JSON-RPC message the SDK can
// read; if not, it answers it on out.
func checkLine(line []byte, out *lineWriter) bool {
	if !json.Valid(line) {
		out.reply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
		return false
	}
	if line[0] == '[' {
		out.reply(nil, jsonrpc.CodeInvalidRequest, "batches (JSON arrays) are not supported; send one message per line")
		return false
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		out.reply(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return false
	}
	return true
}

// lineWriter writes whole lines to w, one at a time, so that the SDK's
// messages and the filter's replies never interleave.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		if _, err := l.w.Write(l.buf[:i+1]); err != nil {
			l.buf = l.buf[:0]
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	return len(p), nil
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
