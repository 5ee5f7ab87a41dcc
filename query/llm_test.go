package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
	"github.com/adaptrag/adaptrag/query"
)

// script answers each rewrite request by the question it carries.
func script(t *testing.T, answers map[string]llmtest.Reply) llmtest.Handler {
	return func(r llmtest.Request) llmtest.Reply {
		var in struct {
			Question string `json:"question"`
			Query    string `json:"query"`
		}
		if err := json.Unmarshal([]byte(r.LastUser()), &in); err != nil {
			t.Errorf("user message is not JSON: %q", r.LastUser())
		}
		key := in.Question
		if key == "" {
			key = in.Query
		}
		rep, ok := answers[key]
		if !ok {
			t.Errorf("unexpected request for %q", key)
		}
		return rep
	}
}

func rewriteJSON(q string, followUp bool, resolved map[string]string, clarify ...string) string {
	type ref struct {
		Mention string `json:"mention"`
		Value   string `json:"value"`
	}
	a := struct {
		Query             string   `json:"query"`
		FollowUp          bool     `json:"follow_up"`
		Resolved          []ref    `json:"resolved"`
		Unresolved        []string `json:"unresolved"`
		ClarifyMention    string   `json:"clarify_mention"`
		ClarifyCandidates []string `json:"clarify_candidates"`
	}{Query: q, FollowUp: followUp, Resolved: []ref{}, Unresolved: []string{}, ClarifyCandidates: []string{}}
	for m, v := range resolved {
		a.Resolved = append(a.Resolved, ref{m, v})
	}
	if len(clarify) > 0 {
		a.ClarifyMention, a.ClarifyCandidates = clarify[0], clarify[1:]
	}
	b, _ := json.Marshal(a)
	return string(b)
}

func newOpenAI(t *testing.T, url string) *query.LLM {
	t.Helper()
	l, err := query.NewOpenAI(llm.Config{BaseURL: url, Model: "rewrite-model"}, query.LLMConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var (
	histP204 = []query.Message{{Role: "user", Content: "What is the after-sales policy for the P-204 battery?"}, {Role: "assistant", Content: "Returns within 15 days."}}
	histWarr = []query.Message{{Role: "user", Content: "P-204 的保修期多久？"}}
	hist30   = []query.Message{{Role: "user", Content: "The return window is 30 days, right?"}}
	histTwo  = []query.Message{{Role: "user", Content: "I bought a P-204 and a P-205 last week."}}
)

func TestLLMRewriteAccepted(t *testing.T) {
	srv := llmtest.NewServer(t, script(t, map[string]llmtest.Reply{
		"Can it be exchanged?": {Content: rewriteJSON("Can the P-204 battery be exchanged?", true, map[string]string{"it": "P-204"}), PromptTokens: 300, CompletionTokens: 40},
	}))
	var m llm.Meter
	ctx := llm.WithMeter(context.Background(), &m)
	r, err := newOpenAI(t, srv.URL).Rewrite(ctx, "Can it be exchanged?", histP204)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Can the P-204 battery be exchanged?" || !r.Rewritten || !r.FollowUp || r.Rule != query.RuleLLM {
		t.Fatalf("rewrite = %+v", r)
	}
	if len(r.Resolved) != 1 || r.Resolved[0] != (query.Resolution{Mention: "it", Value: "P-204", Turn: 0}) {
		t.Fatalf("resolved = %+v", r.Resolved)
	}
	if len(r.Entities) != 1 || r.Entities[0].Value != "P-204" {
		t.Fatalf("entities = %+v", r.Entities)
	}
	if m.Usage() != (llm.Usage{InputTokens: 300, OutputTokens: 40}) {
		t.Fatalf("charged %+v", m.Usage())
	}
	req := srv.Requests()[0]
	if req.Temperature == nil || *req.Temperature != 0 || req.Messages[0].Role != "system" {
		t.Fatalf("request: temperature %v, messages %+v", req.Temperature, req.Messages)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string         `json:"name"`
			Strict bool           `json:"strict"`
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(req.ResponseFormat, &rf); err != nil || rf.Type != "json_schema" || !rf.JSONSchema.Strict || rf.JSONSchema.Name != "query_rewrite" {
		t.Fatalf("response_format = %s (%v)", req.ResponseFormat, err)
	}
	if req, _ := rf.JSONSchema.Schema["required"].([]any); len(req) != 6 {
		t.Fatalf("schema requires %v", req)
	}
}

func TestLLMRewriteRejected(t *testing.T) {
	tests := []struct {
		name, question string
		history        []query.Message
		answer         string
		names          []string // words the error must name
	}{
		{"swap", "P-205 呢？", histWarr, rewriteJSON("P-204 的保修期多久？", true, nil), []string{"swaps", `"P-205"`, `"P-204"`}},
		{"drop a number", "What if it has been 40 days?", hist30, rewriteJSON("What if the return window has passed?", true, nil), []string{"drops", `"40 days"`}},
		{"number swapped", "What if it has been 40 days?", hist30, rewriteJSON("What if it has been 30 days since delivery?", true, nil), []string{"swaps", `"40 days"`, `"30 days"`}},
		{"adds an entity", "Can it be exchanged?", histP204, rewriteJSON("Can the P-204 or the P-206 be exchanged?", true, nil), []string{"adds", `"P-206"`}},
		{"resolves to nothing said", "Can it be exchanged?", histP204, rewriteJSON("Can the battery be exchanged?", true, map[string]string{"it": "P-209"}), []string{"adds", `"P-209"`}},
		{"clarify candidate not said", "Can I return it?", histTwo, rewriteJSON("Can I return it?", true, nil, "it", "P-204", "P-207"), []string{"adds", `"P-207"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, script(t, map[string]llmtest.Reply{tt.question: {Content: tt.answer}}))
			var m llm.Meter
			r, err := newOpenAI(t, srv.URL).Rewrite(llm.WithMeter(context.Background(), &m), tt.question, tt.history)
			if !errors.Is(err, query.ErrRewriteRejected) || !errors.Is(err, query.ErrRewriteFailed) {
				t.Fatalf("err = %v, want ErrRewriteRejected and ErrRewriteFailed", err)
			}
			var re *query.RejectError
			if !errors.As(err, &re) {
				t.Fatalf("err %v is not a *RejectError", err)
			}
			for _, w := range tt.names {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			if r.Text != tt.question || r.Rewritten || r.Rule != query.RuleLLMFailed || r.Clarify != nil {
				t.Fatalf("rewrite = %+v, want the original kept", r)
			}
			if m.Usage().InputTokens == 0 {
				t.Fatalf("a rejected answer's tokens were not charged")
			}
		})
	}
}

func TestLLMRewriteFailures(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		timeout bool
		also    error
	}{
		{"garbage", llmtest.Reply{Content: `{"query": "P-204`}, false, query.ErrMalformed},
		{"not an object", llmtest.Reply{Content: `Sure! The query is: P-204 exchange`}, false, query.ErrMalformed},
		{"missing field", llmtest.Reply{Content: `{"query":"Can the P-204 be exchanged?"}`}, false, query.ErrMalformed},
		{"unknown field", llmtest.Reply{Content: strings.Replace(rewriteJSON("Can the P-204 be exchanged?", true, nil), "{", `{"owner":"u1",`, 1)}, false, query.ErrMalformed},
		{"http 500", llmtest.Reply{Status: 500}, false, llm.ErrUnavailable},
		{"refusal", llmtest.Reply{Refusal: "no"}, false, llm.ErrRefused},
		{"timeout", llmtest.Reply{Content: rewriteJSON("Can the P-204 be exchanged?", true, nil), Delay: 2 * time.Second}, true, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Fixed(tt.reply))
			ctx := context.Background()
			if tt.timeout {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			}
			r, err := newOpenAI(t, srv.URL).Rewrite(ctx, "Can it be exchanged?", histP204)
			if !errors.Is(err, query.ErrRewriteFailed) || !errors.Is(err, tt.also) {
				t.Fatalf("err = %v, want ErrRewriteFailed and %v", err, tt.also)
			}
			if errors.Is(err, query.ErrRewriteRejected) {
				t.Fatalf("a failure is not a rejection: %v", err)
			}
			if !tt.timeout && errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a failure looks like a timeout: %v", err)
			}
			if r.Text != "Can it be exchanged?" || r.Rewritten {
				t.Fatalf("rewrite = %+v, want the original kept", r)
			}
		})
	}
}

func TestLLMClarifyAndShortcuts(t *testing.T) {
	srv := llmtest.NewServer(t, script(t, map[string]llmtest.Reply{
		"Can I return it?": {Content: rewriteJSON("Can I return it?", true, nil, "it", "P-204", "P-205")},
	}))
	l := newOpenAI(t, srv.URL)
	r, err := l.Rewrite(context.Background(), "Can I return it?", histTwo)
	if err != nil || r.Clarify == nil || strings.Join(r.Clarify.Candidates, ",") != "P-204,P-205" || r.Text != "Can I return it?" {
		t.Fatalf("rewrite %+v, err %v", r, err)
	}
	// Small talk and a question without history need no model call.
	for _, c := range []struct {
		q    string
		h    []query.Message
		rule string
	}{{"thanks, bye!", histTwo, query.RuleSmallTalk}, {"How do I reset my VPN password?", nil, query.RuleNoHistory}} {
		r, err := l.Rewrite(context.Background(), c.q, c.h)
		if err != nil || r.Text != c.q || r.Rule != c.rule {
			t.Fatalf("%q: rewrite %+v, err %v", c.q, r, err)
		}
	}
	if srv.Count() != 1 {
		t.Fatalf("%d requests, want 1", srv.Count())
	}
}

func TestLLMJSONModeGenerator(t *testing.T) {
	// NewLLM takes any Generator: JSON mode, schema in the prompt.
	srv := llmtest.NewServer(t, llmtest.Text(rewriteJSON("P-205 的保修期多久？", true, nil)))
	m, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r, err := query.NewLLM(m, query.LLMConfig{}).Rewrite(context.Background(), "P-205 呢？", histWarr)
	if err != nil || r.Text != "P-205 的保修期多久？" {
		t.Fatalf("rewrite %+v, err %v", r, err)
	}
	req := srv.Requests()[0]
	if !strings.Contains(string(req.ResponseFormat), "json_object") || !strings.Contains(req.Messages[0].Content, `"clarify_candidates"`) {
		t.Fatalf("response_format %s, system prompt without schema", req.ResponseFormat)
	}
}

func TestNewOpenAINeedsServer(t *testing.T) {
	if _, err := query.NewOpenAI(llm.Config{OllamaHost: "http://localhost:11434"}, query.LLMConfig{}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("err = %v", err)
	}
}

func TestLLMVariants(t *testing.T) {
	const q = "P-205 质量问题退货运费谁出？"
	ans := func(vs ...string) llmtest.Reply {
		b, _ := json.Marshal(map[string][]string{"variants": vs})
		return llmtest.Reply{Content: string(b)}
	}
	srv := llmtest.NewServer(t, llmtest.Fixed(ans("P-205 售后寄回费用由谁承担", "P-204 质量退货运费", "P-205 瑕疵商品运输成本", "P-205 售后寄回费用由谁承担")))
	var m llm.Meter
	vs, err := newOpenAI(t, srv.URL).Variants(llm.WithMeter(context.Background(), &m), q, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{q, "P-205 售后寄回费用由谁承担", "P-205 瑕疵商品运输成本"}
	if strings.Join(vs, "|") != strings.Join(want, "|") {
		t.Fatalf("variants %q, want %q", vs, want)
	}
	if m.Usage().OutputTokens == 0 {
		t.Fatal("variants tokens not charged")
	}
	// Every variant rejected: the original alone, and the reason.
	srv2 := llmtest.NewServer(t, llmtest.Fixed(ans("P-204 质量退货运费")))
	vs, err = newOpenAI(t, srv2.URL).Variants(context.Background(), q, 3)
	if !errors.Is(err, query.ErrRewriteRejected) || !strings.Contains(err.Error(), "P-205") || len(vs) != 1 || vs[0] != q {
		t.Fatalf("variants %q, err %v", vs, err)
	}
	// A failed call keeps the original.
	srv3 := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Status: 503}))
	vs, err = newOpenAI(t, srv3.URL).Variants(context.Background(), q, 3)
	if !errors.Is(err, query.ErrRewriteFailed) || len(vs) != 1 {
		t.Fatalf("variants %q, err %v", vs, err)
	}
}

func TestLLMHypothetical(t *testing.T) {
	const q = "P-205 质量问题运费谁出？"
	pass := func(p string) llmtest.Reply {
		b, _ := json.Marshal(map[string]string{"passage": p})
		return llmtest.Reply{Content: string(b)}
	}
	good := "P-205 经核实存在质量问题的，签收后三十天内退货，寄回运费由商家承担。"
	srv := llmtest.NewServer(t, llmtest.Fixed(pass(good)))
	p, err := newOpenAI(t, srv.URL).Hypothetical(context.Background(), q)
	if err != nil || p != good {
		t.Fatalf("passage %q, err %v", p, err)
	}
	srv2 := llmtest.NewServer(t, llmtest.Fixed(pass("P-204 经核实存在质量问题的，运费由商家承担。")))
	p, err = newOpenAI(t, srv2.URL).Hypothetical(context.Background(), q)
	if !errors.Is(err, query.ErrRewriteRejected) || !errors.Is(err, query.ErrRewriteFailed) || !strings.Contains(err.Error(), "P-205") || p != "" {
		t.Fatalf("passage %q, err %v", p, err)
	}
	srv3 := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Content: "not json"}))
	if _, err := newOpenAI(t, srv3.URL).Hypothetical(context.Background(), q); !errors.Is(err, query.ErrMalformed) {
		t.Fatalf("err %v", err)
	}
}
