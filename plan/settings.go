package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Defaults applied by Settings when a field is left at its zero value. The
// FAQ and document counts and thresholds are the plan rules' baseline; the
// route sizes are the strategy matrix (factual: dense top 3; analytical:
// hybrid 50 reranked to 8); the context limits are this package's choice
// (see Settings).
const (
	DefaultFAQTopK                 = 20
	DefaultDocTopK                 = 20
	DefaultFinalContextTopN        = 4
	DefaultFAQDirectScoreThreshold = 0.72
	DefaultDocComplexQueryTopK     = 24
	DefaultFAQShortQueryTopK       = 30
	DefaultShortQueryThreshold     = 0.78
	DefaultPricingThreshold        = 0.84
	DefaultComplianceThreshold     = 0.86
	DefaultMinContextScore         = 0.3
	DefaultMaxContextChars         = 6000
	DefaultMaxContextDocChars      = 1500
	DefaultShortQueryMaxUnits      = 12
	DefaultLanguage                = "zh"
	DefaultFactualTopK             = 3
	DefaultAnalyticalCandidates    = 50
	DefaultAnalyticalContext       = 8
)

const (
	langZH, langEN = "zh", "en"
	// defaultFAQFirstThresholdDecrease is how far faq_first lowers the FAQ
	// threshold: 0.72 -> 0.64 with the defaults.
	defaultFAQFirstThresholdDecrease = 0.08
)

// ErrInvalidSettings reports a Settings value that Validate rejects.
var ErrInvalidSettings = errors.New("plan: invalid settings")

// Settings is the planner's configuration. The zero value means the documented
// defaults: every numeric field that is zero (or negative) takes its Default*
// value, nil lists take the built-in tables, and empty texts take the built-in
// wording. A threshold above 1 is clamped to 1 by New (Validate rejects it).
type Settings struct {
	FAQTopK                 int     `json:"faq_top_k"`                  // FAQ candidates; default 20
	DocTopK                 int     `json:"doc_top_k"`                  // document candidates; default 20
	FinalContextTopN        int     `json:"final_context_top_n"`        // passages given to the model; default 4
	FAQDirectScoreThreshold float64 `json:"faq_direct_score_threshold"` // base score for answering from an FAQ hit; default 0.72
	DocComplexQueryTopK     int     `json:"doc_complex_query_top_k"`    // document candidates for complex or risky questions; default 24
	FAQShortQueryTopK       int     `json:"faq_short_query_top_k"`      // FAQ candidates for short questions; default 30
	ShortQueryThreshold     float64 `json:"short_query_threshold"`      // FAQ direct threshold floor for short questions and follow-ups; default 0.78
	PricingThreshold        float64 `json:"pricing_threshold"`          // floor for pricing questions; default 0.84
	ComplianceThreshold     float64 `json:"compliance_threshold"`       // floor for compliance questions; default 0.86

	// FactualTopK is how many passages a factual question retrieves by
	// dense search and keeps; default 3.
	FactualTopK int `json:"factual_top_k"`
	// AnalyticalCandidates is how many candidates each leg of an analytical
	// question's hybrid search fetches; default 50.
	AnalyticalCandidates int `json:"analytical_candidates"`
	// AnalyticalContext is how many passages an analytical question keeps
	// after rerank; default 8.
	AnalyticalContext int `json:"analytical_context"`

	// DisableRerank turns the rerank stage off in every plan (default: on).
	DisableRerank bool `json:"disable_rerank"`
	// MinContextScore is the lowest calibrated relevance (0..1, the same
	// scale whatever found the passage) a passage needs to be kept as
	// evidence; default 0.3, which on the bundled sample's answerable and
	// unanswerable questions ends 87% of the unanswerable ones in "not
	// found" while 96% of the answerable ones keep the passage with the
	// answer (see docs/benchmarks.md). Negative means no floor.
	MinContextScore float64 `json:"min_context_score"`
	// MaxContextChars caps the prompt's context; default 6000 characters
	// (four passages of MaxContextDocChars).
	MaxContextChars int `json:"max_context_chars"`
	// MaxContextDocChars caps one passage; default 1500 characters, about
	// one chunk plus its title.
	MaxContextDocChars int `json:"max_context_doc_chars"`

	// ShortQueryMaxUnits is the length, in content units, at or below which
	// a question is "short" (see the package documentation); default 12.
	ShortQueryMaxUnits float64 `json:"short_query_max_units"`
	// DefaultLanguage ("zh" or "en") is the language of a question with no
	// letters in either script; default "zh".
	DefaultLanguage string `json:"default_language"`

	// Sources is the keyword table used for source suggestions and the
	// source boundary: which sources (categories of the knowledge base) a
	// caller can select and the words that point to each. Nil means none:
	// no suggestion, no boundary check.
	Sources []Source `json:"sources"`
}

// Text is one message in Chinese and English; the question's script picks.
type Text struct {
	ZH string `json:"zh"`
	EN string `json:"en"`
}

// pick returns the text for lang, falling back to the other language.
func (t Text) pick(lang string) string {
	if lang == langEN && t.EN != "" || t.ZH == "" {
		return t.EN
	}
	return t.ZH
}

// Source is one knowledge source a caller can select, with the keywords that
// mark a question as belonging to it. Keyword syntax: see the package doc.
type Source struct {
	Name     string   `json:"name"`  // the value callers pass as Query.Source, e.g. "finance"
	Label    Text     `json:"label"` // display name used in hints; Name when empty
	Keywords []string `json:"keywords"`
}

// withDefaults returns s with every zero field replaced by its default and
// out-of-range thresholds clamped, so a Planner never sees an unusable value.
func (s Settings) withDefaults() Settings {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setF := func(v *float64, d float64) {
		if !(*v > 0) { // also catches NaN
			*v = d
		}
		*v = math.Min(*v, 1)
	}
	setInt(&s.FAQTopK, DefaultFAQTopK)
	setInt(&s.DocTopK, DefaultDocTopK)
	setInt(&s.FinalContextTopN, DefaultFinalContextTopN)
	setInt(&s.DocComplexQueryTopK, DefaultDocComplexQueryTopK)
	setInt(&s.FAQShortQueryTopK, DefaultFAQShortQueryTopK)
	setInt(&s.MaxContextChars, DefaultMaxContextChars)
	setInt(&s.MaxContextDocChars, DefaultMaxContextDocChars)
	setInt(&s.FactualTopK, DefaultFactualTopK)
	setInt(&s.AnalyticalCandidates, DefaultAnalyticalCandidates)
	setInt(&s.AnalyticalContext, DefaultAnalyticalContext)
	setF(&s.FAQDirectScoreThreshold, DefaultFAQDirectScoreThreshold)
	setF(&s.ShortQueryThreshold, DefaultShortQueryThreshold)
	setF(&s.PricingThreshold, DefaultPricingThreshold)
	setF(&s.ComplianceThreshold, DefaultComplianceThreshold)
	switch {
	case math.IsNaN(s.MinContextScore) || s.MinContextScore == 0:
		s.MinContextScore = DefaultMinContextScore
	case s.MinContextScore < 0:
		s.MinContextScore = 0
	case s.MinContextScore > 1:
		s.MinContextScore = 1
	}
	if !(s.ShortQueryMaxUnits > 0) {
		s.ShortQueryMaxUnits = DefaultShortQueryMaxUnits
	}
	if s.DefaultLanguage != langEN {
		s.DefaultLanguage = DefaultLanguage
	}
	s.Sources = cloneSources(s.Sources)
	return s
}

func cloneSources(in []Source) []Source {
	if in == nil {
		return nil
	}
	out := make([]Source, len(in))
	for i, s := range in {
		s.Keywords = append([]string(nil), s.Keywords...)
		out[i] = s
	}
	return out
}

// Validate reports the fields New would have to repair: thresholds outside
// [0, 1], an unknown DefaultLanguage, and sources with an empty or duplicate
// name. Zero values are valid (they mean the defaults). The error wraps
// ErrInvalidSettings.
func (s Settings) Validate() error {
	var errs []error
	for name, v := range map[string]float64{
		"faq_direct_score_threshold": s.FAQDirectScoreThreshold,
		"short_query_threshold":      s.ShortQueryThreshold,
		"pricing_threshold":          s.PricingThreshold,
		"compliance_threshold":       s.ComplianceThreshold,
		"min_context_score":          s.MinContextScore,
	} {
		if math.IsNaN(v) || v > 1 || (v < 0 && name != "min_context_score") {
			errs = append(errs, fmt.Errorf("%w: %s = %v, want a value in [0, 1]", ErrInvalidSettings, name, v))
		}
	}
	if s.DefaultLanguage != "" && s.DefaultLanguage != langZH && s.DefaultLanguage != langEN {
		errs = append(errs, fmt.Errorf("%w: default_language = %q, want \"zh\" or \"en\"", ErrInvalidSettings, s.DefaultLanguage))
	}
	seen := map[string]bool{}
	for i, src := range s.Sources {
		n := strings.ToLower(strings.TrimSpace(src.Name))
		switch {
		case n == "":
			errs = append(errs, fmt.Errorf("%w: sources[%d] has no name", ErrInvalidSettings, i))
		case seen[n]:
			errs = append(errs, fmt.Errorf("%w: source %q is listed twice", ErrInvalidSettings, src.Name))
		}
		seen[n] = true
	}
	sortErrors(errs)
	return errors.Join(errs...)
}

// sortErrors orders errors by message so Validate's output does not depend on
// map iteration order.
func sortErrors(errs []error) {
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && errs[j].Error() < errs[j-1].Error(); j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}

// ParseSources decodes a source table from JSON: an array of
// {"name", "label": {"zh", "en"}, "keywords": [...]} objects. It rejects an
// empty or duplicate name (the error wraps ErrInvalidSettings).
func ParseSources(data []byte) ([]Source, error) {
	var out []Source
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: sources: %w", ErrInvalidSettings, err)
	}
	if err := (Settings{Sources: out}).Validate(); err != nil {
		return nil, err
	}
	return out, nil
}
