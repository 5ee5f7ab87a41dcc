// Package llm is the project's seam to language models. Generator is the one
// interface the nodes call; OpenAI-compatible and Ollama servers are reached
// through github.com/tmc/langchaingo.
package llm

import (
	"context"
	"errors"
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

// Generator produces a completion. Implementations are safe for concurrent use.
type Generator interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// GeneratorFunc adapts a function to Generator.
type GeneratorFunc func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}
