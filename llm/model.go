package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Sentinel errors of the langchaingo adapter. A timeout or cancellation is
// neither: it stays a wrapped context error (errors.Is(err,
// context.DeadlineExceeded) holds).
var (
	// ErrUnavailable reports that the server could not be reached or did
	// not return a usable answer (refused connection, HTTP error status,
	// malformed body).
	ErrUnavailable = errors.New("llm: model unavailable")
	// ErrRefused reports that the model declined to answer: an OpenAI
	// refusal, a content-filter stop, or an empty completion.
	ErrRefused = errors.New("llm: model refused")
)

// Model is a Generator backed by a langchaingo llms.Model (OpenAI-compatible
// or Ollama). It is safe for concurrent use.
type Model struct {
	llm      llms.Model
	provider string
	name     string
	timeout  time.Duration
}

var (
	_ Generator = (*Model)(nil)
	_ Streamer  = (*Model)(nil)
)

// NewOpenAI returns a Model speaking the OpenAI chat-completions protocol to
// c.BaseURL (DefaultOpenAIBaseURL when empty). Extra langchaingo options are
// applied last, so a caller can add openai.WithResponseFormat for structured
// output (one client per schema) or openai.WithHTTPClient.
//
// The environment is never read here: c is the whole configuration.
func NewOpenAI(c Config, opts ...openai.Option) (*Model, error) {
	base := c.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	key := c.APIKey
	if key == "" {
		// Local compatible servers accept any token, but langchaingo insists
		// on one (and would otherwise read OPENAI_API_KEY behind our back).
		key = "unused"
	}
	name := c.Model
	if name == "" {
		name = DefaultOpenAIModel
	}
	all := append([]openai.Option{
		openai.WithToken(key),
		openai.WithBaseURL(base),
		openai.WithModel(name),
		openai.WithHTTPClient(&http.Client{}),
	}, opts...)
	m, err := openai.New(all...)
	if err != nil {
		return nil, fmt.Errorf("llm: openai client: %w", err)
	}
	return &Model{llm: m, provider: "openai", name: name, timeout: c.Timeout}, nil
}

// NewOllama returns a Model using Ollama's native API at c.OllamaHost. It
// returns ErrNotConfigured when OllamaHost is empty.
func NewOllama(c Config) (*Model, error) {
	if c.OllamaHost == "" {
		return nil, fmt.Errorf("llm: ollama: empty host: %w", ErrNotConfigured)
	}
	name := c.OllamaModel
	if name == "" {
		name = c.Model
	}
	if name == "" {
		name = DefaultOllamaModel
	}
	m, err := ollama.New(ollama.WithServerURL(c.OllamaHost), ollama.WithModel(name),
		ollama.WithHTTPClient(&http.Client{}))
	if err != nil {
		return nil, fmt.Errorf("llm: ollama client: %w", err)
	}
	return &Model{llm: m, provider: "ollama", name: name, timeout: c.Timeout}, nil
}

// New picks a client from c: OpenAI-compatible when an API key or base URL
// is set, else Ollama when OllamaHost is set, else ErrNotConfigured.
func New(c Config) (Generator, error) {
	switch c.Provider() {
	case "openai":
		return NewOpenAI(c)
	case "ollama":
		return NewOllama(c)
	}
	return nil, ErrNotConfigured
}

// Provider returns "openai" or "ollama".
func (m *Model) Provider() string { return m.provider }

// Name returns the model name sent to the server.
func (m *Model) Name() string { return m.name }

// Generate implements Generator.
func (m *Model) Generate(ctx context.Context, req Request) (Response, error) {
	return m.GenerateWith(ctx, req)
}

// GenerateStream implements Streamer through langchaingo's streaming call
// option: the server sends the completion as server-sent events and onText
// receives each piece.
func (m *Model) GenerateStream(ctx context.Context, req Request, onText func(string) error) (Response, error) {
	return m.GenerateWith(ctx, req, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		if len(chunk) == 0 {
			return nil
		}
		return onText(string(chunk))
	}))
}

// GenerateWith is Generate with extra langchaingo call options (for example
// llms.WithTemperature(0)); options derived from req are applied first.
func (m *Model) GenerateWith(ctx context.Context, req Request, opts ...llms.CallOption) (Response, error) {
	if m.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	msgs := make([]llms.MessageContent, 0, len(req.Messages))
	for _, msg := range req.Messages {
		role, err := chatRole(msg.Role)
		if err != nil {
			return Response{}, err
		}
		msgs = append(msgs, llms.TextParts(role, msg.Content))
	}
	var callOpts []llms.CallOption
	if req.MaxTokens > 0 {
		callOpts = append(callOpts, llms.WithMaxTokens(req.MaxTokens))
	}
	if req.JSON {
		callOpts = append(callOpts, llms.WithJSONMode())
	}
	callOpts = append(callOpts, opts...)

	out, err := m.llm.GenerateContent(ctx, msgs, callOpts...)
	if err != nil {
		// langchaingo replaces context errors by plain strings; restore
		// the context's own error so timeouts stay matchable.
		if cerr := ctx.Err(); cerr != nil {
			return Response{}, fmt.Errorf("llm: %s %s: %w", m.provider, m.name, context.Cause(ctx))
		}
		return Response{}, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, m.provider, m.name, err)
	}
	if out == nil || len(out.Choices) == 0 || out.Choices[0] == nil {
		return Response{}, fmt.Errorf("%w: %s %s: no choices", ErrUnavailable, m.provider, m.name)
	}
	ch := out.Choices[0]
	resp := Response{
		Text:  ch.Content,
		Model: m.name,
		Usage: Usage{
			InputTokens:  intInfo(ch.GenerationInfo, "PromptTokens"),
			OutputTokens: intInfo(ch.GenerationInfo, "CompletionTokens"),
		},
	}
	if ch.StopReason == "content_filter" {
		return resp, fmt.Errorf("%w: %s %s: stopped by content filter", ErrRefused, m.provider, m.name)
	}
	// A refusal arrives as null content (langchaingo drops the refusal text).
	if strings.TrimSpace(ch.Content) == "" && len(ch.ToolCalls) == 0 {
		return resp, fmt.Errorf("%w: %s %s: empty completion", ErrRefused, m.provider, m.name)
	}
	return resp, nil
}

func chatRole(role string) (llms.ChatMessageType, error) {
	switch role {
	case "system":
		return llms.ChatMessageTypeSystem, nil
	case "user", "":
		return llms.ChatMessageTypeHuman, nil
	case "assistant":
		return llms.ChatMessageTypeAI, nil
	}
	return "", fmt.Errorf("llm: unknown message role %q", role)
}

// intInfo reads a token count from GenerationInfo, whose value types differ
// between providers.
func intInfo(info map[string]any, key string) int {
	switch v := info[key].(type) {
	case int:
		return v
	case int32:
		return int(v)
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}
