package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
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
//
// Each call is traced as a client span "chat <model>" following the
// OpenTelemetry GenAI conventions (see Tracing); prompts and completions
// are recorded only when the caller opts in.
type Model struct {
	llm      llms.Model
	provider string
	name     string
	timeout  time.Duration
	server   string // the server's base URL, for server.address and server.port
	tracing  Tracing
	// plain is set once the server has answered a streamed request with a
	// plain completion: later streamed calls ask for a plain one at once.
	// It is shared by the copies WithTracing makes.
	plain *atomic.Bool
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
	return &Model{llm: m, provider: "openai", name: name, timeout: c.Timeout, server: base, plain: new(atomic.Bool)}, nil
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
	return &Model{llm: m, provider: "ollama", name: name, timeout: c.Timeout, server: c.OllamaHost, plain: new(atomic.Bool)}, nil
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
//
// Some OpenAI-compatible servers ignore "stream": true and answer with a
// plain completion, which langchaingo reads as an empty stream. When a
// stream delivers no text at all, the call is made again without
// streaming and onText receives the whole answer at once; the model then
// remembers that its server does not stream. Should that call fail too, a
// failure the server reported stays what it was, and an empty answer is
// ErrUnavailable (the server did not answer the stream), never ErrRefused.
func (m *Model) GenerateStream(ctx context.Context, req Request, onText func(string) error) (Response, error) {
	if m.plain != nil && m.plain.Load() {
		return m.plainAnswer(ctx, req, onText)
	}
	pieces := 0
	resp, err := m.GenerateWith(ctx, req, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		if len(chunk) == 0 {
			return nil
		}
		pieces++
		return onText(string(chunk))
	}))
	if pieces > 0 || ctx.Err() != nil || !errors.Is(err, errEmpty) {
		return resp, err
	}
	// Nothing was streamed: the server may not stream at all.
	resp2, err2 := m.plainAnswer(ctx, req, onText)
	resp2.Usage.InputTokens += resp.Usage.InputTokens
	resp2.Usage.OutputTokens += resp.Usage.OutputTokens
	switch {
	case err2 == nil:
		if m.plain != nil {
			m.plain.Store(true)
		}
		return resp2, nil
	case errors.Is(err2, errEmpty):
		return resp2, fmt.Errorf("%w: %s %s: the server sent no stream and no plain answer", ErrUnavailable, m.provider, m.name)
	}
	return resp2, err2
}

// plainAnswer makes a call without streaming and hands its whole text to
// onText.
func (m *Model) plainAnswer(ctx context.Context, req Request, onText func(string) error) (Response, error) {
	resp, err := m.GenerateWith(ctx, req)
	if err != nil {
		return resp, err
	}
	if err := onText(resp.Text); err != nil {
		return resp, err
	}
	return resp, nil
}

// errEmpty marks an empty completion (inside ErrRefused), so that a stream
// that delivered nothing can be told from other refusals.
var errEmpty = errors.New("empty completion")

// GenerateWith is Generate with extra langchaingo call options (for example
// llms.WithTemperature(0)); options derived from req are applied first.
func (m *Model) GenerateWith(ctx context.Context, req Request, opts ...llms.CallOption) (Response, error) {
	ctx, span := m.startSpan(ctx, req)
	resp, finish, err := m.generate(ctx, req, opts)
	m.endSpan(ctx, span, req, resp, finish, err)
	return resp, err
}

// generate is one model call; finish is the server's stop reason.
func (m *Model) generate(ctx context.Context, req Request, opts []llms.CallOption) (_ Response, finish string, _ error) {
	if m.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	msgs := make([]llms.MessageContent, 0, len(req.Messages))
	for _, msg := range req.Messages {
		role, err := chatRole(msg.Role)
		if err != nil {
			return Response{}, "", err
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
	if cerr := ctx.Err(); cerr != nil {
		// langchaingo returns the text streamed so far, with a nil error,
		// when the context ends during a streamed completion: a cut answer
		// is never an answer. The tokens it cost are still reported.
		var usage Usage
		if err == nil && out != nil && len(out.Choices) > 0 && out.Choices[0] != nil {
			usage = Usage{InputTokens: intInfo(out.Choices[0].GenerationInfo, "PromptTokens"),
				OutputTokens: intInfo(out.Choices[0].GenerationInfo, "CompletionTokens")}
		}
		return Response{Model: m.name, Usage: usage}, "", fmt.Errorf("llm: %s %s: no complete answer before the call's context ended: %w", m.provider, m.name, context.Cause(ctx))
	}
	if err != nil {
		return Response{}, "", fmt.Errorf("%w: %s %s: %w", ErrUnavailable, m.provider, m.name, err)
	}
	if out == nil || len(out.Choices) == 0 || out.Choices[0] == nil {
		return Response{}, "", fmt.Errorf("%w: %s %s: no choices", ErrUnavailable, m.provider, m.name)
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
	finish = ch.StopReason
	if ch.StopReason == "content_filter" {
		return resp, finish, fmt.Errorf("%w: %s %s: stopped by content filter", ErrRefused, m.provider, m.name)
	}
	// A refusal arrives as null content (langchaingo drops the refusal text).
	if strings.TrimSpace(ch.Content) == "" && len(ch.ToolCalls) == 0 {
		return resp, finish, fmt.Errorf("%w: %s %s: %w", ErrRefused, m.provider, m.name, errEmpty)
	}
	return resp, finish, nil
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

// ScopeName is the instrumentation scope of the model-call spans.
const ScopeName = "github.com/adaptrag/adaptrag/llm"

// OpenTelemetry GenAI attribute keys, declared here because the semconv
// packages that carry them change with every release (see
// docs/tracing.md).
const (
	keyOperationName  = attribute.Key("gen_ai.operation.name")
	keyProviderName   = attribute.Key("gen_ai.provider.name")
	keyRequestModel   = attribute.Key("gen_ai.request.model")
	keyMaxTokens      = attribute.Key("gen_ai.request.max_tokens")
	keyOutputType     = attribute.Key("gen_ai.output.type")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyInputMessages  = attribute.Key("gen_ai.input.messages")
	keyOutputMessages = attribute.Key("gen_ai.output.messages")
	keyServerAddress  = attribute.Key("server.address")
	keyServerPort     = attribute.Key("server.port")
	keyErrorType      = attribute.Key("error.type")
)

// Tracing says how a Model traces its calls. The zero value traces to the
// global tracer provider without content.
type Tracing struct {
	// TracerProvider records the spans; nil means the global provider
	// (otel.GetTracerProvider), looked up at each call so that one
	// installed later is used.
	TracerProvider trace.TracerProvider
	// CaptureContent records the messages sent and the completion received
	// on each span (gen_ai.input.messages, gen_ai.output.messages, as JSON).
	// They may hold personal data: leave it off unless the trace store is
	// as protected as the conversations. WithContentCapture overrides it
	// for one call.
	CaptureContent bool
}

// WithTracing returns a copy of m that traces its calls as t says.
func (m *Model) WithTracing(t Tracing) *Model {
	c := *m
	c.tracing = t
	return &c
}

type captureKey struct{}

// WithContentCapture returns a context under which model calls record
// their prompts and completions on their spans (on = true) or never do
// (on = false), whatever Tracing.CaptureContent says. Without it nothing
// is recorded unless Tracing.CaptureContent is set.
func WithContentCapture(ctx context.Context, on bool) context.Context {
	return context.WithValue(ctx, captureKey{}, on)
}

func (m *Model) captures(ctx context.Context) bool {
	if on, ok := ctx.Value(captureKey{}).(bool); ok {
		return on
	}
	return m.tracing.CaptureContent
}

// startSpan opens the client span of one call: "chat <model>", with the
// request's attributes.
func (m *Model) startSpan(ctx context.Context, req Request) (context.Context, trace.Span) {
	tp := m.tracing.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	attrs := []attribute.KeyValue{
		keyOperationName.String("chat"),
		keyProviderName.String(m.provider),
		keyRequestModel.String(m.name),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, keyMaxTokens.Int(req.MaxTokens))
	}
	if req.JSON {
		attrs = append(attrs, keyOutputType.String("json"))
	}
	if host, port, ok := hostPort(m.server); ok {
		attrs = append(attrs, keyServerAddress.String(host), keyServerPort.Int(port))
	}
	ctx, span := tp.Tracer(ScopeName).Start(ctx, "chat "+m.name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if span.IsRecording() && m.captures(ctx) {
		span.SetAttributes(keyInputMessages.String(inputMessages(req.Messages)))
	}
	return ctx, span
}

// endSpan records the outcome of a call and ends its span.
func (m *Model) endSpan(ctx context.Context, span trace.Span, req Request, resp Response, finish string, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(keyInputTokens.Int(resp.Usage.InputTokens), keyOutputTokens.Int(resp.Usage.OutputTokens))
	if finish != "" {
		span.SetAttributes(keyFinishReasons.StringSlice([]string{finish}))
	}
	if m.captures(ctx) && resp.Text != "" {
		span.SetAttributes(keyOutputMessages.String(outputMessages(resp.Text, finish)))
	}
	if err != nil {
		span.SetAttributes(keyErrorType.String(errorType(err)))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// errorType is the error.type of a failed call: a low-cardinality name.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrRefused):
		return "refused"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "_OTHER"
}

// hostPort splits a server URL into server.address and server.port, with
// the scheme's default port when none is given.
func hostPort(raw string) (string, int, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", 0, false
	}
	host, portStr := u.Hostname(), u.Port()
	if portStr == "" {
		switch u.Scheme {
		case "https":
			portStr = "443"
		case "http":
			portStr = "80"
		}
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return host, 0, false
	}
	return host, port, true
}

// genAIMessage is one message in the GenAI conventions' JSON form.
type genAIMessage struct {
	Role         string      `json:"role"`
	Parts        []genAIPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

type genAIPart struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

func inputMessages(msgs []Message) string {
	out := make([]genAIMessage, 0, len(msgs))
	for _, m := range msgs {
		role := m.Role
		if role == "" {
			role = "user"
		}
		out = append(out, genAIMessage{Role: role, Parts: []genAIPart{{Type: "text", Content: m.Content}}})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func outputMessages(text, finish string) string {
	b, _ := json.Marshal([]genAIMessage{{Role: "assistant", Parts: []genAIPart{{Type: "text", Content: text}}, FinishReason: finish}})
	return string(b)
}
