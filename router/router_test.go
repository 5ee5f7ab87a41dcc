package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/router"
)

func TestSchemaStrictSubset(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(router.SchemaJSON(), &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" || s["additionalProperties"] != false {
		t.Fatalf("root: type=%v additionalProperties=%v", s["type"], s["additionalProperties"])
	}
	var req []string
	for _, r := range s["required"].([]any) {
		req = append(req, r.(string))
	}
	slices.Sort(req)
	if want := []string{"complexity", "confidence", "query_type", "reason"}; !slices.Equal(req, want) {
		t.Fatalf("required = %v, want %v", req, want)
	}
	props := s["properties"].(map[string]any)
	if len(props) != 4 {
		t.Fatalf("%d properties", len(props))
	}
	enum := func(name string) []string {
		var out []string
		for _, v := range props[name].(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	if got := enum("query_type"); !slices.Equal(got, []string{"factual", "analytical", "chitchat"}) {
		t.Fatalf("query_type enum = %v", got)
	}
	if got := enum("complexity"); !slices.Equal(got, []string{"simple", "deep"}) {
		t.Fatalf("complexity enum = %v", got)
	}
	wantType := map[string]string{"query_type": "string", "complexity": "string", "confidence": "number", "reason": "string"}
	for name, typ := range wantType {
		p := props[name].(map[string]any)
		if p["type"] != typ || p["description"] == "" || p["description"] == nil {
			t.Errorf("%s: %v", name, p)
		}
	}
	raw := string(router.SchemaJSON())
	for _, banned := range []string{"$ref", "$defs", "definitions", "$schema", "minimum", "maximum", "anyOf"} {
		if strings.Contains(raw, banned) {
			t.Errorf("schema contains %q: %s", banned, raw)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := router.Profile{QueryType: router.Factual, Complexity: router.Simple, Confidence: 0.9, Reason: "r"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*router.Profile){
		"type":       func(p *router.Profile) { p.QueryType = "smalltalk" },
		"complexity": func(p *router.Profile) { p.Complexity = "medium" },
		"negative":   func(p *router.Profile) { p.Confidence = -0.1 },
		"above one":  func(p *router.Profile) { p.Confidence = 1.01 },
		"nan":        func(p *router.Profile) { p.Confidence = math.NaN() },
	}
	for name, mut := range bad {
		p := ok
		mut(&p)
		if err := p.Validate(); !errors.Is(err, router.ErrInvalidProfile) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	for _, c := range []float64{0, 1} {
		p := ok
		p.Confidence = c
		if err := p.Validate(); err != nil {
			t.Errorf("confidence %v: %v", c, err)
		}
	}
}

func TestDecide(t *testing.T) {
	prof := func(typ router.QueryType, conf float64) router.Profile {
		return router.Profile{QueryType: typ, Complexity: router.Simple, Confidence: conf, Reason: "r"}
	}
	boom := errors.New("boom")
	tests := []struct {
		name         string
		p            router.Profile
		err          error
		min          float64
		route        router.QueryType
		fallback     bool
		keepsProfile bool
	}{
		{"confident chitchat", prof(router.Chitchat, 0.95), nil, 0.7, router.Chitchat, false, true},
		{"confident factual", prof(router.Factual, 0.7), nil, 0.7, router.Factual, false, true},
		{"low confidence", prof(router.Chitchat, 0.69), nil, 0.7, router.Analytical, true, true},
		{"zero min means default", prof(router.Factual, 0.6), nil, 0, router.Analytical, true, true},
		{"negative min disables", prof(router.Factual, 0.1), nil, -1, router.Factual, false, true},
		{"error", prof(router.Chitchat, 0.99), boom, 0.7, router.Analytical, true, false},
		{"invalid profile", prof("smalltalk", 0.99), nil, 0.7, router.Analytical, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := router.Decide(tt.p, tt.err, tt.min)
			if d.Route != tt.route || d.Fallback != tt.fallback || (d.Profile != nil) != tt.keepsProfile {
				t.Fatalf("decision = %+v", d)
			}
			if d.Fallback == (d.Cause == "") {
				t.Fatalf("fallback %v with cause %q", d.Fallback, d.Cause)
			}
			if tt.err != nil && !errors.Is(d.Err, tt.err) {
				t.Fatalf("Err = %v", d.Err)
			}
		})
	}
	if d := (router.Policy{}).Decide(prof(router.Factual, 0.69), nil); !d.Fallback {
		t.Fatalf("zero Policy must use 0.7: %+v", d)
	}
}

type countingClassifier struct {
	calls atomic.Int32
	p     router.Profile
	err   error
	usage llm.Usage
}

func (c *countingClassifier) Classify(ctx context.Context, q string) (router.Profile, error) {
	r, err := c.ClassifyWithUsage(ctx, q)
	return r.Profile, err
}

func (c *countingClassifier) ClassifyWithUsage(ctx context.Context, q string) (router.Result, error) {
	c.calls.Add(1)
	return router.Result{Profile: c.p, Usage: c.usage, Source: "fake"}, c.err
}

func TestCascade(t *testing.T) {
	sure := router.Profile{QueryType: router.Factual, Complexity: router.Simple, Confidence: 0.9}
	unsure := router.Profile{QueryType: router.Chitchat, Complexity: router.Simple, Confidence: 0.5}
	llmProf := router.Profile{QueryType: router.Analytical, Complexity: router.Deep, Confidence: 0.8}
	llmErr := errors.New("llm down")
	tests := []struct {
		name      string
		first     router.Profile
		firstErr  error
		secondErr error
		want      router.Profile
		escalated bool
		wantErr   bool
		llmErr    error
	}{
		{"confident offline", sure, nil, nil, sure, false, false, nil},
		{"unsure offline asks llm", unsure, nil, nil, llmProf, true, false, nil},
		{"llm fails keeps offline", unsure, nil, llmErr, unsure, true, false, llmErr},
		{"offline fails uses llm", router.Profile{}, errors.New("x"), nil, llmProf, true, false, nil},
		{"both fail", router.Profile{}, errors.New("x"), llmErr, router.Profile{}, true, true, llmErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := &countingClassifier{p: tt.first, err: tt.firstErr}
			second := &countingClassifier{p: llmProf, err: tt.secondErr, usage: llm.Usage{InputTokens: 300, OutputTokens: 40}}
			c := router.NewCascade(first, second, 0.7)
			r, err := c.ClassifyWithUsage(context.Background(), "q")
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, router.ErrNoProfile)) {
				t.Fatalf("err = %v", err)
			}
			if r.Profile != tt.want || r.Escalated != tt.escalated || !errors.Is(r.LLMErr, tt.llmErr) {
				t.Fatalf("result = %+v", r)
			}
			wantCalls := int32(0)
			if tt.escalated {
				wantCalls = 1
			}
			if got := second.calls.Load(); got != wantCalls {
				t.Fatalf("llm called %d times, want %d", got, wantCalls)
			}
			if tt.escalated && r.Usage.InputTokens != 300 {
				t.Fatalf("usage not recorded: %+v", r.Usage)
			}
		})
	}
	t.Run("default threshold", func(t *testing.T) {
		first := &countingClassifier{p: router.Profile{QueryType: router.Factual, Complexity: router.Simple, Confidence: 0.69}}
		second := &countingClassifier{p: llmProf}
		if _, err := router.NewCascade(first, second, 0).Classify(context.Background(), "q"); err != nil || second.calls.Load() != 1 {
			t.Fatalf("err %v, calls %d", err, second.calls.Load())
		}
	})
}

func TestClassifierFunc(t *testing.T) {
	var c router.Classifier = router.ClassifierFunc(func(_ context.Context, q string) (router.Profile, error) {
		return router.Profile{QueryType: router.Factual, Reason: q}, nil
	})
	p, err := c.Classify(context.Background(), "hello")
	if err != nil || p.Reason != "hello" {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestNewPicksClassifier(t *testing.T) {
	c, err := router.New(llm.Config{})
	if _, ok := c.(*router.Offline); err != nil || !ok {
		t.Fatalf("offline config: %T %v", c, err)
	}
	c, err = router.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1"})
	if _, ok := c.(*router.Cascade); err != nil || !ok {
		t.Fatalf("server config: %T %v", c, err)
	}
}
