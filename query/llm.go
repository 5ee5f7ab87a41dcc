package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/router"
	"github.com/invopop/jsonschema"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// RuleLLM is the Rule of a rewrite the model produced; RuleLLMFailed of the
// original question kept after a model failure.
const (
	RuleLLM       = "llm"
	RuleLLMFailed = "llm_failed"
)

// ErrMalformed reports a model answer that is not the JSON object asked for.
// It is wrapped with ErrRewriteFailed.
var ErrMalformed = errors.New("query: malformed model answer")

// RewritePrompt is the system prompt of (*LLM).Rewrite.
const RewritePrompt = `You rewrite the last question of a conversation into a standalone search query for a knowledge base.
Answer with the JSON object the schema describes.

Rules:
- query: the question rewritten so that it can be understood without the conversation, in the question's language.
  Replace references ("it", "this one", "那这个", "它的") and fill in what an elided question leaves out ("What about X?", "X 呢？")
  from the conversation. Change nothing else: keep every product, order, code, number, amount, duration and date the
  user wrote exactly as written (LT-450 stays LT-450, 40 days stays 40 days). Never compute a date: keep "last year",
  "去年" as words. Never add an identifier or number that the conversation does not contain. If the question already
  stands alone (a new topic), return it unchanged and do not bring in anything from the conversation.
- follow_up: true when the question depends on the conversation.
- resolved: each reference you replaced, with the exact text of the mention and the value from the conversation.
- unresolved: references you could not resolve.
- clarify_candidates: when a reference could mean two or more different things of the same kind named in the latest
  exchange that names any (e.g. two products), list all of them and set clarify_mention to the reference; then query is
  the question unchanged. Otherwise an empty list and an empty string.

Examples (conversation => question => answer):
[user: What is the warranty on the LT-450?] => Does it cover the battery? =>
{"query":"Does the LT-450 warranty cover the battery?","follow_up":true,"resolved":[{"mention":"it","value":"LT-450"}],"unresolved":[],"clarify_mention":"","clarify_candidates":[]}
[user: 订单 A2001 什么时候发货？] => 那 A2005 呢？ =>
{"query":"订单 A2005 什么时候发货？","follow_up":true,"resolved":[],"unresolved":[],"clarify_mention":"","clarify_candidates":[]}
[user: SKU-3381 和 SKU-3390 哪款更安静？] => 这款多少钱？ =>
{"query":"这款多少钱？","follow_up":true,"resolved":[],"unresolved":[],"clarify_mention":"这款","clarify_candidates":["SKU-3381","SKU-3390"]}
[user: HB-20 是上周买的。] => 现在还能退吗？ =>
{"query":"上周购买的 HB-20 现在还能退吗？","follow_up":true,"resolved":[],"unresolved":[],"clarify_mention":"","clarify_candidates":[]}
[user: What's the warranty on the TV-55A?] => How do I book a meeting room? =>
{"query":"How do I book a meeting room?","follow_up":false,"resolved":[],"unresolved":[],"clarify_mention":"","clarify_candidates":[]}`

// VariantsPrompt is the system prompt of (*LLM).Variants.
const VariantsPrompt = `You write alternative phrasings of a search query, to find documents that word things differently.
Answer with the JSON object the schema describes: variants, a list of distinct rephrasings in the query's language.
Keep every product, order, code, number, amount, duration and date of the query exactly; add none; keep the scope
(do not widen "return shipping cost" to "compensation policy"). Prefer the words a policy, manual or FAQ would use.`

// HypotheticalPrompt is the system prompt of (*LLM).Hypothetical.
const HypotheticalPrompt = `Write a short passage (at most 120 words), in the question's language, that could appear in a company
knowledge base and would answer the question. It is used only as a search key, never shown as an answer, so plausible
wording matters more than facts. Keep every product, order and code of the question exactly; name no other.
Answer with the JSON object the schema describes.`

// LLMConfig configures LLM. The zero value uses the built-in prompts.
type LLMConfig struct {
	// RewritePrompt, VariantsPrompt and HypotheticalPrompt replace the
	// built-in system prompts when not empty.
	RewritePrompt, VariantsPrompt, HypotheticalPrompt string
	// MaxTokens caps each answer; 0 means 500.
	MaxTokens int
	// Window is how many of the most recent history messages are sent; 0
	// means DefaultWindow.
	Window int
	// MaxPassageRunes bounds a hypothetical passage (longer ones are cut);
	// 0 means 800.
	MaxPassageRunes int
	// Vocab is the knowledge base's vocabulary: the check of every rewrite
	// reads its names as entities, and the offline rules that stand in
	// (StandIn) use it. Nil: entities by shape alone.
	Vocab Vocabulary
	// Tenants, when not nil, gives each tenant its own vocabulary, read
	// for the tenant in the context (WithTenant) instead of Vocab, as
	// Offline.Tenants.
	Tenants *Vocabularies
}

// LLM rewrites, varies and expands queries with a language model and
// structured output, and validates every answer in Go: the JSON shape, and
// with Check that no entity or number of the user was dropped, swapped or
// invented. On any failure it returns the original question with an error
// wrapping ErrRewriteFailed (and ErrRewriteRejected for a rejection, or the
// context's error for a timeout), so the caller keeps the original. Every
// call's tokens are charged to the context with llm.Charge. It is safe for
// concurrent use.
type LLM struct {
	rewrite, variants, hyde llm.Generator
	cfg                     LLMConfig
}

var _ Rewriter = (*LLM)(nil)

// NewLLM returns an LLM that sends every task to g in JSON mode, with the
// expected JSON schema in the prompt. Use NewOpenAI for servers that
// enforce a schema (strict structured output).
func NewLLM(g llm.Generator, cfg LLMConfig) *LLM {
	return newLLM(g, g, g, cfg, true)
}

// NewOpenAI returns an LLM speaking to an OpenAI-compatible server with
// strict structured output: one client per task, each bound to its JSON
// schema (langchaingo binds a schema to a client). It returns
// llm.ErrNotConfigured when c names no OpenAI-compatible server.
func NewOpenAI(c llm.Config, cfg LLMConfig) (*LLM, error) {
	if c.APIKey == "" && c.BaseURL == "" {
		return nil, fmt.Errorf("query: llm rewriter needs an OpenAI-compatible server: %w", llm.ErrNotConfigured)
	}
	var gs [3]llm.Generator
	for k, s := range []struct {
		name string
		v    any
	}{{"query_rewrite", &rewriteAnswer{}}, {"query_variants", &variantsAnswer{}}, {"hypothetical_passage", &passageAnswer{}}} {
		var prop openai.ResponseFormatJSONSchemaProperty
		if err := json.Unmarshal(schemaJSON(s.v), &prop); err != nil {
			return nil, fmt.Errorf("query: schema: %w", err)
		}
		m, err := llm.NewOpenAI(c, openai.WithResponseFormat(&openai.ResponseFormat{
			Type:       "json_schema",
			JSONSchema: &openai.ResponseFormatJSONSchema{Name: s.name, Strict: true, Schema: &prop},
		}))
		if err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		gs[k] = m
	}
	return newLLM(gs[0], gs[1], gs[2], cfg, false), nil
}

func newLLM(rw, va, hy llm.Generator, cfg LLMConfig, schemaInPrompt bool) *LLM {
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 500
	}
	if cfg.MaxPassageRunes <= 0 {
		cfg.MaxPassageRunes = 800
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	withSchema := func(p, def string, v any) string {
		if p == "" {
			p = def
		}
		if schemaInPrompt {
			p += "\n\nJSON schema of the answer:\n" + string(schemaJSON(v))
		}
		return p
	}
	cfg.RewritePrompt = withSchema(cfg.RewritePrompt, RewritePrompt, &rewriteAnswer{})
	cfg.VariantsPrompt = withSchema(cfg.VariantsPrompt, VariantsPrompt, &variantsAnswer{})
	cfg.HypotheticalPrompt = withSchema(cfg.HypotheticalPrompt, HypotheticalPrompt, &passageAnswer{})
	return &LLM{rewrite: rw, variants: va, hyde: hy, cfg: cfg}
}

// rewriteAnswer is the structured output of a rewrite.
type rewriteAnswer struct {
	Query             string        `json:"query" jsonschema:"description=the standalone query in the question's language"`
	FollowUp          bool          `json:"follow_up" jsonschema:"description=true when the question depends on the conversation"`
	Resolved          []resolvedRef `json:"resolved" jsonschema:"description=each reference replaced and the value it stands for"`
	Unresolved        []string      `json:"unresolved" jsonschema:"description=references that found nothing in the conversation"`
	ClarifyMention    string        `json:"clarify_mention" jsonschema:"description=the ambiguous reference when clarify_candidates is not empty; else empty"`
	ClarifyCandidates []string      `json:"clarify_candidates" jsonschema:"description=two or more things of the same kind the reference could mean; else empty"`
}

type resolvedRef struct {
	Mention string `json:"mention" jsonschema:"description=the reference as written in the question"`
	Value   string `json:"value" jsonschema:"description=what it stands for as written in the conversation"`
}

type variantsAnswer struct {
	Variants []string `json:"variants" jsonschema:"description=distinct rephrasings of the query"`
}

type passageAnswer struct {
	Passage string `json:"passage" jsonschema:"description=a short passage that would answer the question"`
}

// schemaJSON is the strict JSON schema of v: flat objects, every field
// required, no additional properties, no $ref.
func schemaJSON(v any) []byte {
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true, ExpandedStruct: true}
	s := r.Reflect(v)
	s.Version = ""
	b, err := json.Marshal(s)
	if err != nil { // cannot happen for a reflected schema
		panic(err)
	}
	return b
}

// generate calls g (at temperature 0 when it takes call options) and
// charges the tokens.
func (l *LLM) generate(ctx context.Context, g llm.Generator, system, user string) (string, error) {
	req := llm.Request{
		Messages:  []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		MaxTokens: l.cfg.MaxTokens,
		JSON:      true,
	}
	var resp llm.Response
	var err error
	if m, ok := g.(interface {
		GenerateWith(context.Context, llm.Request, ...llms.CallOption) (llm.Response, error)
	}); ok {
		resp, err = m.GenerateWith(ctx, req, llms.WithTemperature(0))
	} else {
		resp, err = g.Generate(ctx, req)
	}
	llm.Charge(ctx, resp.Usage)
	if err != nil {
		return "", err
	}
	return resp.Text, nil
}

// decode parses a model's JSON answer strictly into v: unknown fields and
// trailing data are rejected; a code fence around the object is tolerated.
func decode(text string, v any, required ...string) error {
	s := strings.TrimSpace(text)
	s = strings.TrimPrefix(s, "```json")
	s = strings.TrimPrefix(s, "```")
	s = strings.TrimSuffix(s, "```")
	s = strings.TrimSpace(s)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	for _, f := range required {
		if _, ok := raw[f]; !ok {
			return fmt.Errorf("%w: missing field %q", ErrMalformed, f)
		}
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data", ErrMalformed)
	}
	return nil
}

// Rewrite implements Rewriter with the model. Questions that are only small
// talk, or that come with no history, are returned as they are without a
// call. The answer is accepted only if it is well formed, its clarify
// candidates and resolved values occur in the history, and Check passes.
func (l *LLM) Rewrite(ctx context.Context, question string, history []Message) (Rewrite, error) {
	voc, verr := vocabFor(ctx, l.cfg.Tenants, l.cfg.Vocab)
	if verr != nil {
		// Without the tenant's names the check cannot tell a swapped name:
		// the offline rules stand in (the caller's fallback).
		return Rewrite{Text: question, Rule: RuleLLMFailed}, fmt.Errorf("%w: %w", ErrRewriteFailed, verr)
	}
	keep := Rewrite{Text: question, Rule: RuleStandalone, Entities: parse(question, voc).entities()}
	switch {
	case strings.TrimSpace(question) == "":
		keep.Rule = RuleEmpty
		return keep, nil
	case router.DetectSmallTalk(question).Only:
		keep.Rule, keep.SmallTalk = RuleSmallTalk, true
		return keep, nil
	}
	win := history[max(0, len(history)-l.cfg.Window):]
	if len(win) == 0 {
		keep.Rule = RuleNoHistory
		return keep, nil
	}
	in, _ := json.Marshal(struct {
		History  []Message `json:"conversation"`
		Question string    `json:"question"`
	}{win, question})
	fail := func(err error) (Rewrite, error) {
		keep.Rule = RuleLLMFailed
		return keep, fmt.Errorf("%w: %w", ErrRewriteFailed, err)
	}
	text, err := l.generate(ctx, l.rewrite, l.cfg.RewritePrompt, string(in))
	if err != nil {
		return fail(err)
	}
	var ans rewriteAnswer
	if err := decode(text, &ans, "query", "follow_up", "resolved", "unresolved", "clarify_mention", "clarify_candidates"); err != nil {
		return fail(err)
	}
	inHistory := func(v string) int {
		for k := len(win) - 1; k >= 0; k-- {
			if containsFold(win[k].Content, v) {
				return len(history) - len(win) + k
			}
		}
		return -1
	}
	if len(ans.ClarifyCandidates) >= 2 {
		for _, c := range ans.ClarifyCandidates {
			if inHistory(c) < 0 {
				return fail(&RejectError{Op: "add", Entity: c})
			}
		}
		mention := ans.ClarifyMention
		if mention == "" {
			mention = question
		}
		keep.Rule, keep.FollowUp = RuleLLM, true
		keep.Clarify = &Clarify{Mention: mention, Candidates: ans.ClarifyCandidates}
		return keep, nil
	}
	q := strings.TrimSpace(ans.Query)
	if utf8.RuneCountInString(q) > 4*utf8.RuneCountInString(question)+400 {
		return fail(fmt.Errorf("%w: query of %d characters", ErrMalformed, utf8.RuneCountInString(q)))
	}
	if err := CheckWith(voc, question, win, q); err != nil {
		return fail(err)
	}
	r := Rewrite{Text: q, Rewritten: q != question, FollowUp: ans.FollowUp, Unresolved: ans.Unresolved, Rule: RuleLLM}
	for _, rr := range ans.Resolved {
		turn := inHistory(rr.Value)
		if turn < 0 {
			return fail(&RejectError{Op: "add", Entity: rr.Value})
		}
		r.Resolved = append(r.Resolved, Resolution{Mention: rr.Mention, Value: rr.Value, Turn: turn})
	}
	r.Entities = parse(q, voc).entities()
	return r, nil
}

// Variants returns up to n phrasings of text from the model, the original
// first and always kept. A variant that drops, swaps or adds an entity or a
// number is left out; the rest go through Dedupe. On failure it returns
// []string{text} and an error wrapping ErrRewriteFailed; when the model
// answered but every variant was rejected, the error also wraps
// ErrRewriteRejected and names the first rejection.
func (l *LLM) Variants(ctx context.Context, text string, n int) ([]string, error) {
	out := []string{text}
	if n <= 1 || strings.TrimSpace(text) == "" {
		return out, nil
	}
	in, _ := json.Marshal(struct {
		Query string `json:"query"`
		Count int    `json:"count"`
	}{text, n - 1})
	ans, err := l.generate(ctx, l.variants, l.cfg.VariantsPrompt, string(in))
	if err != nil {
		return out, fmt.Errorf("%w: variants: %w", ErrRewriteFailed, err)
	}
	var va variantsAnswer
	if err := decode(ans, &va, "variants"); err != nil {
		return out, fmt.Errorf("%w: variants: %w", ErrRewriteFailed, err)
	}
	q := newText(text)
	var first error
	kept := 0
	for _, v := range va.Variants {
		v = strings.TrimSpace(v)
		if err := check(q, nil, newText(v), false); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, v)
		kept++
	}
	out = Dedupe(out)
	out = out[:min(n, len(out))]
	if kept == 0 && first != nil {
		return out, fmt.Errorf("%w: variants: %w", ErrRewriteFailed, first)
	}
	return out, nil
}

// Hypothetical returns a short passage that could answer text (HyDE), to be
// embedded and used only as a search key: never as evidence, never shown.
// The passage must keep the question's identifiers and numbers and name no
// other identifier (it may state numbers and times of its own: they are
// search wording, not facts). On failure or rejection it returns "" and an
// error wrapping ErrRewriteFailed (and ErrRewriteRejected naming the entity).
func (l *LLM) Hypothetical(ctx context.Context, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: hypothetical: empty question", ErrRewriteFailed)
	}
	in, _ := json.Marshal(struct {
		Question string `json:"question"`
	}{text})
	ans, err := l.generate(ctx, l.hyde, l.cfg.HypotheticalPrompt, string(in))
	if err != nil {
		return "", fmt.Errorf("%w: hypothetical: %w", ErrRewriteFailed, err)
	}
	var pa passageAnswer
	if err := decode(ans, &pa, "passage"); err != nil {
		return "", fmt.Errorf("%w: hypothetical: %w", ErrRewriteFailed, err)
	}
	p := strings.TrimSpace(pa.Passage)
	if rs := []rune(p); len(rs) > l.cfg.MaxPassageRunes {
		p = string(rs[:l.cfg.MaxPassageRunes])
	}
	if err := check(newText(text), nil, newText(p), true); err != nil {
		return "", fmt.Errorf("%w: hypothetical: %w", ErrRewriteFailed, err)
	}
	return p, nil
}
