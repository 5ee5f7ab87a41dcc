// Package router profiles a query before retrieval: its type (factual,
// analytical, chitchat), its complexity (simple, deep), a confidence and a
// reason. The adaptive pipeline routes on the profile: chitchat skips
// retrieval, factual does a light dense look-up, analytical runs the full
// hybrid + rerank pipeline, and anything uncertain falls back to analytical.
//
// Three classifiers share the Classifier interface:
//
//   - Offline: the default; a small calibrated model shipped in the
//     binary (no network, tens of microseconds a query).
//   - LLM: an OpenAI-compatible model with strict structured output.
//   - Cascade: Offline first, the LLM only when Offline is unsure.
//
// Decide (or Policy.Decide) turns a profile or an error into a route with
// the fallback rule applied.
package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/invopop/jsonschema"
)

// QueryType is the route a question takes: how much retrieval it needs.
type QueryType string

// Query types.
const (
	Factual    QueryType = "factual"    // one fact a single passage answers: dense top-k
	Analytical QueryType = "analytical" // compare or synthesise: hybrid, reranked
	Chitchat   QueryType = "chitchat"   // small talk: no retrieval
)

// Complexities.
const (
	Simple = "simple"
	Deep   = "deep"
)

// Profile is the router's judgement of a query. Its JSON form is the
// structured output asked of an LLM (see Schema).
type Profile struct {
	QueryType  QueryType `json:"query_type" jsonschema:"enum=factual,enum=analytical,enum=chitchat,description=factual: one fact that a single document answers; analytical: compare or synthesize several documents; chitchat: greeting or small talk that needs no knowledge base. A greeting followed by a real question is never chitchat."`
	Complexity string    `json:"complexity" jsonschema:"enum=simple,enum=deep,description=simple: answered in a sentence or two; deep: needs several steps or documents"`
	Confidence float64   `json:"confidence" jsonschema:"description=how sure the classification is: a number from 0 to 1"`
	Reason     string    `json:"reason" jsonschema:"description=one short sentence explaining the choice"`
}

// Errors. A classifier failure wraps ErrNoProfile (and the cause), so the
// caller can fall back with one errors.Is check; timeouts additionally
// match context.DeadlineExceeded.
var (
	// ErrNoProfile reports that a classifier produced no usable profile.
	ErrNoProfile = errors.New("router: no profile")
	// ErrInvalidProfile reports a profile with a value outside its domain
	// (unknown type or complexity, confidence outside 0..1).
	ErrInvalidProfile = errors.New("router: invalid profile")
)

// Validate checks the enums and that Confidence is within 0..1 (the
// structured-output schema cannot express the range, so Go checks it).
func (p Profile) Validate() error {
	switch p.QueryType {
	case Factual, Analytical, Chitchat:
	default:
		return fmt.Errorf("%w: query_type %q", ErrInvalidProfile, p.QueryType)
	}
	switch p.Complexity {
	case Simple, Deep:
	default:
		return fmt.Errorf("%w: complexity %q", ErrInvalidProfile, p.Complexity)
	}
	if !(p.Confidence >= 0 && p.Confidence <= 1) { // also rejects NaN
		return fmt.Errorf("%w: confidence %v outside [0, 1]", ErrInvalidProfile, p.Confidence)
	}
	return nil
}

// Schema returns the JSON schema of Profile: a flat object, every field
// required, additionalProperties false, no $ref or $defs — the subset that
// OpenAI strict structured output accepts.
func Schema() *jsonschema.Schema {
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true, ExpandedStruct: true}
	s := r.Reflect(&Profile{})
	s.Version = "" // "$schema" is not part of the strict subset
	return s
}

// SchemaJSON is Schema encoded as JSON.
func SchemaJSON() []byte {
	b, err := json.Marshal(Schema())
	if err != nil { // cannot happen for a reflected schema
		panic(err)
	}
	return b
}

// Classifier profiles a query. Implementations are safe for concurrent use.
type Classifier interface {
	Classify(ctx context.Context, query string) (Profile, error)
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(ctx context.Context, query string) (Profile, error)

// Classify calls f.
func (f ClassifierFunc) Classify(ctx context.Context, query string) (Profile, error) {
	return f(ctx, query)
}

// Result is a profile with the cost of producing it, so the pipeline can
// record tokens per node.
type Result struct {
	Profile Profile
	// Usage is the tokens spent by model calls (zero for Offline).
	Usage llm.Usage
	// Source is the classifier that produced Profile: "offline" or "llm".
	Source string
	// Escalated reports that a Cascade asked the LLM.
	Escalated bool
	// LLMErr is the LLM failure a Cascade absorbed by keeping the offline
	// profile (nil otherwise).
	LLMErr error
}

// UsageClassifier is a Classifier that also reports the tokens it spent.
// Offline, LLM and Cascade implement it.
type UsageClassifier interface {
	Classifier
	ClassifyWithUsage(ctx context.Context, query string) (Result, error)
}
