// Package llm is the project's seam to language models. Generator is the one
// interface the nodes call; OpenAI-compatible and Ollama servers are reached
// through github.com/tmc/langchaingo.
package llm

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrNotConfigured reports that no model is configured (the offline default).
var ErrNotConfigured = errors.New("llm: no model configured")

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Request is a chat completion request.
type Request struct {
	Messages  []Message
	MaxTokens int // 0 means the server's default
	// JSON asks for a JSON object answer (JSON mode). Servers that support
	// schemas get one through a dedicated client (see router).
	JSON bool
}

// Usage is the token count a server reported for one call.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is a completion.
type Response struct {
	Text  string
	Model string
	Usage Usage
}

// Generator produces a completion. Implementations are safe for concurrent
// use and report the tokens a call spent in Response.Usage.
//
// Whoever calls Generate charges the returned usage to the context with
// Charge, so that a pipeline's per-node accounting sees every model call,
// including those made inside classifiers and rerankers.
type Generator interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// Streamer is implemented by generators that can deliver a completion as it
// is produced. onText receives the text in order, on the calling goroutine;
// an error from it stops the generation. The returned Response holds the
// whole text and the usage, as Generate's does.
type Streamer interface {
	GenerateStream(ctx context.Context, req Request, onText func(string) error) (Response, error)
}

// GeneratorFunc adapts a function to Generator.
type GeneratorFunc func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}

// Meter adds up the tokens charged under a context (see WithMeter and
// Charge). It is safe for concurrent use.
type Meter struct{ in, out atomic.Int64 }

// Add adds u to the meter.
func (m *Meter) Add(u Usage) {
	m.in.Add(int64(u.InputTokens))
	m.out.Add(int64(u.OutputTokens))
}

// Usage returns the tokens added so far.
func (m *Meter) Usage() Usage {
	return Usage{InputTokens: int(m.in.Load()), OutputTokens: int(m.out.Load())}
}

type meterKey struct{}

// WithMeter returns a context whose model calls are charged to m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// Charge adds u to the meter of ctx, if it has one. Call it with the Usage
// of every Generate call made on behalf of ctx.
func Charge(ctx context.Context, u Usage) {
	if u == (Usage{}) {
		return
	}
	if m, ok := ctx.Value(meterKey{}).(*Meter); ok {
		m.Add(u)
	}
}
