package plan

import (
	"strings"

	"github.com/adaptrag/adaptrag/router"
)

// Action is what a Decision does with a question.
type Action string

// Actions of a Decision.
const (
	ActionDirect   Action = "direct_answer" // a fixed reply, no model or store touched
	ActionRetrieve Action = "retrieval"     // go on to the profile, the plan and retrieval
)

// Reasons of a direct-answer Decision. A retrieval decision has no reason.
const (
	ReasonGreeting       = "greeting_rule"
	ReasonHumanService   = "human_service_rule"
	ReasonSafety         = "safety_rule"
	ReasonSourceBoundary = "source_boundary"
	ReasonEmptyQuery     = "empty_query"
)

// Intents of an IntentResult.
const (
	IntentFAQ          = "FAQ_QUERY"
	IntentKnowledge    = "KNOWLEDGE_QUERY"
	IntentFollowUp     = "FOLLOW_UP"
	IntentGreeting     = "GREETING"
	IntentHumanService = "HUMAN_SERVICE"
	IntentOutOfScope   = "OUT_OF_SCOPE"
)

// Question categories (RetrievalPlan.QuestionCategory).
const (
	CategoryDefault         = "default"
	CategoryPricing         = "pricing"
	CategoryCompliance      = "compliance"
	CategoryTroubleshooting = "troubleshooting"
	CategorySummary         = "summary"
)

// Query is one user turn.
type Query struct {
	Text    string   `json:"text"`
	History []string `json:"history,omitempty"` // earlier user questions, oldest first
	Source  string   `json:"source,omitempty"`  // the source the caller selected; "" for none
	// Coverage reports a question that asks about all of something
	// ("summarize all supplier complaints"), as query understanding found.
	Coverage bool `json:"coverage,omitempty"`
	// FollowUp reports a question query understanding rewrote from the
	// history: its intent is FOLLOW_UP even though Text now stands alone.
	FollowUp bool `json:"follow_up,omitempty"`
}

// Decision is the cheap, deterministic decision taken before any
// retrieval: answer directly with a fixed reply, or go on to retrieval. The
// reply's wording is the caller's (see the pipeline's Texts); the decision
// only says which reply and why.
type Decision struct {
	Action          Action `json:"action"`                     // ActionDirect or ActionRetrieve
	Reason          string `json:"reason"`                     // Reason*; "" for retrieval
	Lang            string `json:"lang"`                       // "zh" or "en": the language of the question
	SuggestedSource string `json:"suggested_source,omitempty"` // for ReasonSourceBoundary: where the question belongs
	SelectedSource  string `json:"selected_source,omitempty"`  // for ReasonSourceBoundary: what the caller selected
}

// IntentResult is the question's intent and what it implies downstream.
type IntentResult struct {
	Intent          string  `json:"intent"`
	Confidence      float64 `json:"confidence"`       // fixed per rule; see the package documentation
	RequiresRewrite bool    `json:"requires_rewrite"` // FOLLOW_UP: rewrite against the history before searching
	SuggestedSource string  `json:"suggested_source"` // the source the question's keywords point to, or ""
	Reason          string  `json:"reason"`           // the rule and the cue that decided, e.g. "knowledge_cue:以及"
}

// Result is the whole planning output of one turn, as the CLI's
// "adaptrag plan --json" prints it. Intent and Plan are nil when the
// decision is a direct answer.
type Result struct {
	Decision Decision      `json:"decision"`
	Intent   *IntentResult `json:"intent"`
	Plan     *Plan         `json:"retrieval_plan"`
}

// Planner takes the route decision, classifies the intent and builds the
// retrieval plan. It holds no mutable state after New and is safe for
// concurrent use.
type Planner struct {
	s          Settings
	rules      []Rule
	sources    []compiledSource
	human      matcher
	safety     matcher
	openers    matcher
	anaphors   matcher
	knowledge  matcher
	categories map[string]matcher
	table      matcher
	tableItems matcher
}

type compiledSource struct {
	Source
	key string // lower-cased, trimmed Name
	m   matcher
}

// New returns a Planner with the given settings (zero fields take their
// defaults) and the rule table DefaultRules builds from them.
func New(s Settings) *Planner {
	s = s.withDefaults()
	return newPlanner(s, DefaultRules(s))
}

func newPlanner(s Settings, rules []Rule) *Planner {
	p := &Planner{
		s:          s,
		rules:      orderRules(rules),
		human:      compileKeywords(humanServiceCues...),
		safety:     compileKeywords(safetyCues...),
		openers:    compileKeywords(followUpOpeners...),
		anaphors:   compileKeywords(anaphors...),
		knowledge:  compileKeywords(knowledgeCues...),
		categories: make(map[string]matcher, len(categoryCues)),
		table:      compileKeywords(tableCues...),
		tableItems: compileKeywords(tableItemCues...),
	}
	for c, kws := range categoryCues {
		p.categories[c] = compileKeywords(kws...)
	}
	for _, src := range s.Sources {
		key := sourceKey(src.Name)
		if key == "" {
			continue
		}
		p.sources = append(p.sources, compiledSource{Source: src, key: key, m: compileKeywords(src.Keywords...)})
	}
	return p
}

// Settings returns the planner's settings with defaults filled in.
func (p *Planner) Settings() Settings {
	s := p.s
	s.Sources = cloneSources(s.Sources)
	return s
}

func sourceKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// analysis is everything the detectors find in one query. Decide,
// ClassifyIntent and Plan all read it, and Prepare computes it once.
type analysis struct {
	t          text
	lang       string
	safetyCue  string
	humanCue   string
	greeting   bool
	followCue  string
	knowledge  []string
	category   string
	table      string // the cue that made it table-shaped, or ""
	short      bool
	source     string         // best-matching source key, or ""
	sourceHits map[string]int // hits per source key
}

func (p *Planner) analyze(q Query) *analysis {
	a := &analysis{t: analyzeText(q.Text), category: CategoryDefault}
	a.lang = a.t.language(p.s.DefaultLanguage)
	if a.t.empty() {
		return a
	}
	t := &a.t
	a.safetyCue = p.safety.first(t)
	a.humanCue = p.human.first(t)
	a.greeting = router.DetectSmallTalk(q.Text).Only
	a.short = t.units <= p.s.ShortQueryMaxUnits
	a.followCue = p.followUpCue(t, q.History, a.short)
	if a.followCue == "" && q.FollowUp {
		a.followCue = "rewritten"
	}
	a.knowledge = dropNested(p.knowledge.all(t))
	a.category = p.category(t)
	a.table = p.tableCue(t)
	a.source, a.sourceHits = p.suggestSource(t)
	if a.source == "" && a.followCue != "" {
		// An elliptical follow-up names no topic of its own: the topic is
		// the previous question's.
		for i := len(q.History) - 1; i >= 0 && a.source == ""; i-- {
			h := analyzeText(q.History[i])
			a.source, _ = p.suggestSource(&h)
		}
	}
	return a
}

// followUpCue returns the cue that makes the question an elliptical
// follow-up, or "". A follow-up needs a non-blank history and a short question
// that opens like a continuation (那…, what about…), points back (这个, it) or
// ends in 呢. A long question is taken as self-contained.
func (p *Planner) followUpCue(t *text, history []string, short bool) string {
	if !short || !hasHistory(history) {
		return ""
	}
	if c := p.openers.leading(t); c != "" {
		return "opener:" + c
	}
	if c := p.anaphors.first(t); c != "" {
		return "anaphor:" + c
	}
	if strings.HasSuffix(strings.TrimRightFunc(t.norm, isTrailing), "呢") {
		return "particle:呢"
	}
	return ""
}

// dropNested removes cues that are part of another matched cue, so that
// "在哪里查看" is not counted again as "在哪里查".
func dropNested(cues []string) []string {
	out := cues[:0:0]
	for i, c := range cues {
		nested := false
		for j, d := range cues {
			if i != j && len(d) > len(c) && strings.Contains(d, c) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, c)
		}
	}
	return out
}

func isTrailing(r rune) bool { return !isCJK(r) && !isWordRune(r) }

func hasHistory(h []string) bool {
	for _, s := range h {
		if strings.TrimSpace(s) != "" {
			return true
		}
	}
	return false
}

// category returns the highest-precedence category whose cues occur in t.
func (p *Planner) category(t *text) string {
	for _, c := range categoryPrecedence {
		if p.categories[c].first(t) != "" {
			return c
		}
	}
	return CategoryDefault
}

// tableCue returns why t is table-shaped: a structure cue, or two distinct
// row-item cues; "" when it is not.
func (p *Planner) tableCue(t *text) string {
	if c := p.table.first(t); c != "" {
		return c
	}
	if items := p.tableItems.all(t); len(items) >= 2 {
		return strings.Join(items[:2], "+")
	}
	return ""
}

// suggestSource returns the source with the most keyword hits (ties go to
// the earlier source in the table) and the hits of every source.
func (p *Planner) suggestSource(t *text) (string, map[string]int) {
	best, bestN := "", 0
	var hits map[string]int
	for _, s := range p.sources {
		n := len(s.m.all(t))
		if n == 0 {
			continue
		}
		if hits == nil {
			hits = make(map[string]int)
		}
		hits[s.key] += n
		if n > bestN {
			best, bestN = s.key, n
		}
	}
	return best, hits
}

func (p *Planner) source(key string) (compiledSource, bool) {
	for _, s := range p.sources {
		if s.key == key {
			return s, true
		}
	}
	return compiledSource{}, false
}

// Decide takes the route decision for q without retrieval. Checks run in
// this order: empty question, safety, hand-off to a human, pure greeting,
// source boundary; anything else goes to retrieval. A question made of
// pleasantries plus a real question is not a greeting.
func (p *Planner) Decide(q Query) Decision {
	return p.decide(q, p.analyze(q))
}

func (p *Planner) decide(q Query, a *analysis) Decision {
	direct := func(reason string) Decision {
		return Decision{Action: ActionDirect, Reason: reason, Lang: a.lang}
	}
	switch {
	case a.t.empty():
		return direct(ReasonEmptyQuery)
	case a.safetyCue != "":
		return direct(ReasonSafety)
	case a.humanCue != "":
		return direct(ReasonHumanService)
	case a.greeting:
		return direct(ReasonGreeting)
	}
	if d, ok := p.boundary(q, a); ok {
		return d
	}
	return Decision{Action: ActionRetrieve, Lang: a.lang}
}

// boundary reports a question that plainly belongs to another source than
// the selected one: the selected source is in the table, none of its
// keywords occur, and another source's do. An unknown selected source is
// never judged.
func (p *Planner) boundary(q Query, a *analysis) (Decision, bool) {
	sel := sourceKey(q.Source)
	if sel == "" || a.source == "" || a.source == sel || a.sourceHits[sel] > 0 {
		return Decision{}, false
	}
	selected, ok := p.source(sel)
	if !ok {
		return Decision{}, false
	}
	suggested, _ := p.source(a.source)
	return Decision{
		Action:          ActionDirect,
		Reason:          ReasonSourceBoundary,
		Lang:            a.lang,
		SuggestedSource: suggested.Name,
		SelectedSource:  selected.Name,
	}, true
}

// SourceLabel returns the display label of a source of the table in lang
// ("zh" or "en"), or name itself when the source has no label or is not in
// the table.
func (p *Planner) SourceLabel(name, lang string) string {
	if s, ok := p.source(sourceKey(name)); ok {
		if l := s.Label.pick(lang); l != "" {
			return l
		}
	}
	return name
}

// Prepare runs the whole planning layer for one turn: the decision and,
// when it is retrieval, the intent and the plan. route is the question's
// query type when it has been profiled, or "" to stop before the route
// stage of the rule table (see Plan).
func (p *Planner) Prepare(q Query, route router.QueryType) Result {
	a := p.analyze(q)
	r := Result{Decision: p.decide(q, a)}
	if r.Decision.Action != ActionRetrieve {
		return r
	}
	in := p.classify(a)
	pl := p.plan(q, a, in, route)
	r.Intent, r.Plan = &in, &pl
	return r
}

// EffectiveSource returns the source filter retrieval should use: the
// caller's selection wins, otherwise the intent's suggestion ("" for none).
// The source is a filter on the data, not a retrieval strategy, so it is not
// part of RetrievalPlan.
func EffectiveSource(callerSource string, intent IntentResult) string {
	if s := strings.TrimSpace(callerSource); s != "" {
		return s
	}
	return intent.SuggestedSource
}
