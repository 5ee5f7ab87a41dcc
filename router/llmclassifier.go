package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// SystemPrompt is the instruction the LLM classifier sends. Its few-shot
// examples include the boundary cases: a greeting followed by a real
// question is factual (or analytical), never chitchat.
const SystemPrompt = `You are the query router of an assistant that answers from a knowledge base.
Classify the user's message and answer with the JSON object the schema describes.

query_type:
- chitchat: greetings, thanks, small talk, questions about the assistant itself. No knowledge base needed.
  If the message contains ANY substantive question, it is NOT chitchat: judge the substantive part.
- factual: one fact that a single document answers (a number, a date, a rule, a contact, a how-to step).
- analytical: needs several documents: compare, contrast, summarize, explain why, analyse impact, multi-step reasoning.
complexity: simple (one or two sentences answer it) or deep (needs several steps, documents or clauses).
confidence: your probability (0 to 1) that query_type is right.
reason: one short sentence.

Examples:
你好 -> chitchat, simple
你能做什么？ -> chitchat, simple
谢谢，再见 -> chitchat, simple
洗牙一次要多久？ -> factual, simple
你好，顺便问下周末门诊开到几点 -> factual, simple (greeting + real question: judge the question)
Hi! Quick question: how long do deleted files stay in the trash? -> factual, simple
hello, who signs off on a discount above 20% -> factual, simple
对比一下种植牙和烤瓷牙的优缺点 -> analytical, deep
把三种套餐的价格和席位上限整理成一张表 -> analytical, deep
Why does a moved folder lose its guest links, and how does that differ from a copied one? -> analytical, deep
Who is older, the director of Jaws or the director of Alien? -> analytical, deep`

// LLMConfig configures the LLM classifier. The zero value is usable with
// an llm.Config that points at a server.
type LLMConfig struct {
	// Prompt replaces SystemPrompt when not empty.
	Prompt string
	// MaxTokens caps the answer; 0 means 200 (a profile is ~60 tokens).
	MaxTokens int
}

// LLM classifies with an OpenAI-compatible model and strict structured
// output (response_format json_schema built from Profile). Every failure —
// timeout, transport error, refusal, malformed JSON, out-of-range value,
// unknown enum — is returned as an error wrapping ErrNoProfile and its
// cause, so the caller falls back. It is safe for concurrent use.
type LLM struct {
	model *llm.Model
	cfg   LLMConfig
}

// NewLLM builds the classifier's own OpenAI-compatible client (the schema
// is bound to the client in langchaingo, so it is one client per schema).
// Set cfg.Timeout to bound each call. It returns llm.ErrNotConfigured when
// cfg names no OpenAI-compatible server (Ollama's native API has no schema
// support: point BaseURL at Ollama's /v1 instead).
func NewLLM(cfg llm.Config, lc LLMConfig) (*LLM, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("router: llm classifier needs an OpenAI-compatible server: %w", llm.ErrNotConfigured)
	}
	var prop openai.ResponseFormatJSONSchemaProperty
	if err := json.Unmarshal(SchemaJSON(), &prop); err != nil {
		return nil, fmt.Errorf("router: schema: %w", err)
	}
	m, err := llm.NewOpenAI(cfg, openai.WithResponseFormat(&openai.ResponseFormat{
		Type: "json_schema",
		JSONSchema: &openai.ResponseFormatJSONSchema{
			Name:   "query_profile",
			Strict: true,
			Schema: &prop,
		},
	}))
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	if lc.Prompt == "" {
		lc.Prompt = SystemPrompt
	}
	if lc.MaxTokens == 0 {
		lc.MaxTokens = 200
	}
	return &LLM{model: m, cfg: lc}, nil
}

// Classify implements Classifier.
func (c *LLM) Classify(ctx context.Context, query string) (Profile, error) {
	r, err := c.ClassifyWithUsage(ctx, query)
	return r.Profile, err
}

// ClassifyWithUsage implements UsageClassifier. Usage is filled whenever
// the server answered, even if the answer was unusable.
func (c *LLM) ClassifyWithUsage(ctx context.Context, query string) (Result, error) {
	res := Result{Source: "llm"}
	resp, err := c.model.GenerateWith(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: c.cfg.Prompt},
			{Role: "user", Content: query},
		},
		MaxTokens: c.cfg.MaxTokens,
	}, llms.WithTemperature(0))
	res.Usage = resp.Usage
	llm.Charge(ctx, resp.Usage)
	if err != nil {
		return res, fmt.Errorf("%w: llm: %w", ErrNoProfile, err)
	}
	p, err := ParseProfile(resp.Text)
	if err != nil {
		return res, fmt.Errorf("%w: llm: %w", ErrNoProfile, err)
	}
	res.Profile = p
	return res, nil
}

// ErrMalformed reports model output that is not a Profile JSON object.
var ErrMalformed = errors.New("router: malformed profile JSON")

// ParseProfile decodes and validates a model's JSON answer. Unknown fields
// are rejected as the strict schema forbids them; a code fence around the
// object is tolerated (some compatible servers add one).
func ParseProfile(text string) (Profile, error) {
	s := strings.TrimSpace(text)
	s = strings.TrimPrefix(s, "```json")
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimSuffix(s, "```")
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var raw struct {
		QueryType  *string  `json:"query_type"`
		Complexity *string  `json:"complexity"`
		Confidence *float64 `json:"confidence"`
		Reason     *string  `json:"reason"`
	}
	if err := dec.Decode(&raw); err != nil {
		return Profile{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if dec.More() {
		return Profile{}, fmt.Errorf("%w: trailing data", ErrMalformed)
	}
	if raw.QueryType == nil || raw.Complexity == nil || raw.Confidence == nil || raw.Reason == nil {
		return Profile{}, fmt.Errorf("%w: missing field", ErrMalformed)
	}
	p := Profile{QueryType: QueryType(*raw.QueryType), Complexity: *raw.Complexity, Confidence: *raw.Confidence, Reason: *raw.Reason}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}
