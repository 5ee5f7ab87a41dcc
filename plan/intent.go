package plan

import (
	"math"
	"strings"
)

// Fixed confidences of the intent rules. They order how sure each rule is,
// they are not calibrated probabilities: an exact cue (a hand-off request) is
// surer than the absence of cues (FAQ_QUERY).
const (
	confEmpty     = 1.0
	confDirect    = 0.95 // greeting, hand-off, safety
	confFollowUp  = 0.85
	confKnowledge = 0.7 // plus 0.1 per further cue, at most 0.9
	confFAQ       = 0.7
	confFAQShort  = 0.6 // a short question says little about what it wants
)

// ClassifyIntent classifies q. Rules, first match wins:
//
//   - empty text: OUT_OF_SCOPE (reason "empty_query");
//   - safety cue: OUT_OF_SCOPE; hand-off cue: HUMAN_SERVICE; nothing but
//     pleasantries: GREETING;
//   - a short elliptical question with history: FOLLOW_UP, RequiresRewrite;
//   - a knowledge cue: KNOWLEDGE_QUERY;
//   - otherwise FAQ_QUERY.
//
// Confidences are fixed per rule: empty 1.0; safety, hand-off and greeting
// 0.95; follow-up 0.85; knowledge 0.7 plus 0.1 per further distinct cue, at
// most 0.9; FAQ 0.7, or 0.6 for a short question.
//
// SuggestedSource is the source whose keywords the question (or, for a
// follow-up without keywords of its own, the latest history turn that has
// some) matches best.
func (p *Planner) ClassifyIntent(q Query) IntentResult {
	return p.classify(p.analyze(q))
}

func (p *Planner) classify(a *analysis) IntentResult {
	r := IntentResult{}
	if s, ok := p.source(a.source); ok {
		r.SuggestedSource = s.Name
	}
	switch {
	case a.t.empty():
		r.Intent, r.Confidence, r.Reason = IntentOutOfScope, confEmpty, ReasonEmptyQuery
	case a.safetyCue != "":
		r.Intent, r.Confidence, r.Reason = IntentOutOfScope, confDirect, "safety_cue:"+a.safetyCue
	case a.humanCue != "":
		r.Intent, r.Confidence, r.Reason = IntentHumanService, confDirect, "human_service_cue:"+a.humanCue
	case a.greeting:
		r.Intent, r.Confidence, r.Reason = IntentGreeting, confDirect, "greeting_only"
	case a.followCue != "":
		r.Intent, r.Confidence, r.Reason = IntentFollowUp, confFollowUp, "follow_up_"+a.followCue
		r.RequiresRewrite = true
	case len(a.knowledge) > 0:
		c := math.Min(confKnowledge+0.1*float64(len(a.knowledge)-1), 0.9)
		r.Intent, r.Confidence = IntentKnowledge, math.Round(c*100)/100
		r.Reason = "knowledge_cue:" + strings.Join(a.knowledge, ",")
	default:
		r.Intent, r.Confidence, r.Reason = IntentFAQ, confFAQ, "single_concrete_ask"
		if a.short {
			r.Confidence, r.Reason = confFAQShort, "short_single_ask"
		}
	}
	return r
}

// IsRetrievalIntent reports whether an intent leads to retrieval; GREETING,
// HUMAN_SERVICE and OUT_OF_SCOPE do not. An unknown intent does, so that a
// custom classifier's new intent is searched rather than silently dropped.
func IsRetrievalIntent(intent string) bool {
	switch intent {
	case IntentGreeting, IntentHumanService, IntentOutOfScope:
		return false
	}
	return true
}

// QuestionCategory returns q's risk category: pricing, compliance,
// troubleshooting, summary or default. When several match, the one whose
// wrong answer costs most wins: compliance, then pricing, troubleshooting,
// summary.
func (p *Planner) QuestionCategory(q Query) string {
	return p.analyze(q).category
}

// IsTableQuery reports whether q is table-shaped: it names a list, ledger,
// field, row or table (清单, 台账, 字段, 明细, 表格, list of, column, …), or it
// names two row items such as an amount and an owner (金额 + 责任人).
func (p *Planner) IsTableQuery(q Query) bool {
	return p.analyze(q).table != ""
}

// IsShortQuery reports whether q is at most Settings.ShortQueryMaxUnits
// content units long (see the package documentation).
func (p *Planner) IsShortQuery(q Query) bool {
	a := p.analyze(q)
	return !a.t.empty() && a.short
}

// ContentUnits returns the length of text in content units, the measure the
// short-question guard uses: one per CJK character, one per number, 1.5 per
// Latin word; punctuation and a trailing sentence particle (吗, 呢, …) count
// nothing.
func ContentUnits(text string) float64 {
	t := analyzeText(text)
	return t.units
}
