package router

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/llm"
)

// Cascade asks a cheap classifier first and an expensive one only when the
// cheap one is unsure. If the expensive one fails, the cheap profile is
// kept and the failure recorded in Result.LLMErr: an LLM outage never makes
// routing worse than offline. Cascade is safe for concurrent use when its
// classifiers are.
type Cascade struct {
	first, second Classifier
	threshold     float64
}

// NewCascade returns a Cascade that calls llm only when offline's confidence
// is below threshold (threshold <= 0 means DefaultMinConfidence).
func NewCascade(offline, llm Classifier, threshold float64) *Cascade {
	if threshold <= 0 {
		threshold = DefaultMinConfidence
	}
	return &Cascade{first: offline, second: llm, threshold: threshold}
}

// Classify implements Classifier.
func (c *Cascade) Classify(ctx context.Context, query string) (Profile, error) {
	r, err := c.ClassifyWithUsage(ctx, query)
	return r.Profile, err
}

// ClassifyWithUsage implements UsageClassifier. It fails only when the first
// classifier fails and the second cannot stand in.
func (c *Cascade) ClassifyWithUsage(ctx context.Context, query string) (Result, error) {
	first, ferr := classifyWithUsage(ctx, c.first, query)
	if ferr == nil && first.Profile.Confidence >= c.threshold {
		return first, nil
	}
	second, serr := classifyWithUsage(ctx, c.second, query)
	second.Escalated = true
	second.Usage.InputTokens += first.Usage.InputTokens
	second.Usage.OutputTokens += first.Usage.OutputTokens
	switch {
	case serr == nil:
		return second, nil
	case ferr == nil:
		first.Escalated = true
		first.Usage = second.Usage
		first.LLMErr = serr
		return first, nil
	}
	return Result{Escalated: true, Usage: second.Usage, LLMErr: serr},
		fmt.Errorf("%w: cascade: first: %w; second: %w", ErrNoProfile, ferr, serr)
}

// classifyWithUsage uses ClassifyWithUsage when c has it.
func classifyWithUsage(ctx context.Context, c Classifier, query string) (Result, error) {
	if uc, ok := c.(UsageClassifier); ok {
		return uc.ClassifyWithUsage(ctx, query)
	}
	p, err := c.Classify(ctx, query)
	return Result{Profile: p, Source: fmt.Sprintf("%T", c)}, err
}

// New returns the classifier the configuration allows: Offline alone when
// cfg names no OpenAI-compatible server (the default, offline mode), else a
// Cascade that asks the LLM only when Offline's confidence is below
// DefaultMinConfidence.
func New(cfg llm.Config) (UsageClassifier, error) {
	off, err := NewOffline()
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return off, nil
	}
	l, err := NewLLM(cfg, LLMConfig{})
	if err != nil {
		return nil, err
	}
	return NewCascade(off, l, DefaultMinConfidence), nil
}
