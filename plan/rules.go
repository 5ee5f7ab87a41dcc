package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/router"
)

// Mode is how the document collection is searched.
type Mode string

// Retrieval modes of a Plan.
const (
	ModeNone   Mode = "none"   // no document retrieval at all
	ModeDense  Mode = "dense"  // dense vector search, no rerank
	ModeHybrid Mode = "hybrid" // dense + BM25 fused by reciprocal rank, then reranked
)

// Plan is the one retrieval policy of a question: every field is read by
// the run. The rule table builds it (see DefaultRules): the route stage sets
// how much to retrieve (mode, candidates, rerank, passages kept), the other
// stages where and how carefully (FAQ search and its direct-answer bar,
// table preference, query variants, relevance floor, prompt size). It says
// how to search, not where: the source filter is EffectiveSource's job, and
// the tenant scope is the caller's.
type Plan struct {
	Mode               Mode    `json:"mode"`                  // document retrieval: none, dense or hybrid
	RunFAQ             bool    `json:"run_faq"`               // search the FAQ collection
	RunDoc             bool    `json:"run_doc"`               // search the document collection (false iff Mode is none)
	FAQTopK            int     `json:"faq_top_k"`             // FAQ candidates
	DocTopK            int     `json:"doc_top_k"`             // document candidates (per leg for hybrid)
	Rerank             bool    `json:"rerank"`                // rerank the candidates (hybrid)
	FAQDirectThreshold float64 `json:"faq_direct_threshold"`  // score an FAQ hit needs to be answered directly
	FinalContextTopN   int     `json:"final_context_top_n"`   // passages kept as evidence
	MinContextScore    float64 `json:"min_context_score"`     // lowest calibrated relevance (0..1) a passage needs
	MaxContextChars    int     `json:"max_context_chars"`     // evidence size cap, in characters
	MaxContextDocChars int     `json:"max_context_doc_chars"` // one passage's size cap, in characters
	UseQueryVariants   bool    `json:"use_query_variants"`    // search alternative phrasings too
	QuestionCategory   string  `json:"question_category"`     // Category*: risky categories get a stricter answer instruction
	PreferTable        bool    `json:"prefer_table"`          // prefer table rows and list items as evidence
	FAQDirectExactOnly bool    `json:"faq_direct_exact_only"` // only an exact FAQ match may be answered directly
	Coverage           bool    `json:"coverage"`              // the question asks about all of something: the answer states what it covers
	Reason             string  `json:"reason"`                // tags of the rules that fired, joined by "_", in order
}

// FAQDirect reports whether an FAQ hit may be returned as the answer without
// generation: the plan searches FAQs, the hit's score reaches the threshold,
// and the hit is an exact match (see ExactMatch) or the plan allows similar
// ones. A NaN score never qualifies.
func (pl Plan) FAQDirect(score float64, exact bool) bool {
	return pl.RunFAQ && score >= pl.FAQDirectThreshold && (exact || !pl.FAQDirectExactOnly)
}

// normalize keeps Mode and RunDoc in agreement: a plan that does not
// search documents has mode none, and mode none searches no documents.
func (pl *Plan) normalize() {
	if !pl.RunDoc || pl.DocTopK == 0 && pl.Mode != ModeNone {
		pl.Mode = ModeNone
	}
	pl.RunDoc = pl.Mode != ModeNone
	if pl.Mode != ModeHybrid {
		pl.Rerank = false
	}
}

// Stage orders the rule table: every intent rule applies before every
// short-question guard, and so on.
type Stage uint8

// Stages, in the order they apply.
const (
	StageIntent Stage = iota
	StageShortGuard
	StageCategory
	StageTable
	StageRoute
	numStages
)

// String returns the stage's name: "intent", "short_guard", "category",
// "table" or "route".
func (s Stage) String() string {
	switch s {
	case StageIntent:
		return "intent"
	case StageShortGuard:
		return "short_guard"
	case StageCategory:
		return "category"
	case StageTable:
		return "table"
	case StageRoute:
		return "route"
	}
	return "stage(" + strconv.Itoa(int(s)) + ")"
}

// Op is an operation on one numeric plan field.
type Op uint8

// Operations; OpKeep (the zero value) leaves the field alone.
const (
	OpKeep    Op = iota
	OpSet        // field = v
	OpAtLeast    // field = max(field, v)
	OpAtMost     // field = min(field, v)
	OpScale      // field = field * v
	OpAdd        // field = field + v
)

// Num is an operation and its operand. The zero Num changes nothing.
type Num struct {
	Op    Op
	Value float64
}

// Set returns a Num that sets the field to v.
func Set(v float64) Num { return Num{OpSet, v} }

// AtLeast returns a Num that raises the field to v when it is below v.
func AtLeast(v float64) Num { return Num{OpAtLeast, v} }

// AtMost returns a Num that lowers the field to v when it is above v.
func AtMost(v float64) Num { return Num{OpAtMost, v} }

// Scale returns a Num that multiplies the field by v.
func Scale(v float64) Num { return Num{OpScale, v} }

// Add returns a Num that adds v to the field; a negative v lowers it.
func Add(v float64) Num { return Num{OpAdd, v} }

func (n Num) apply(x float64) float64 {
	switch n.Op {
	case OpSet:
		return n.Value
	case OpAtLeast:
		return math.Max(x, n.Value)
	case OpAtMost:
		return math.Min(x, n.Value)
	case OpScale:
		return x * n.Value
	case OpAdd:
		return x + n.Value
	}
	return x
}

// String renders the operation as "=v", ">=v", "<=v", "*v", "+v" or "-v";
// "" for OpKeep.
func (n Num) String() string {
	v := strconv.FormatFloat(n.Value, 'g', -1, 64)
	switch n.Op {
	case OpSet:
		return "=" + v
	case OpAtLeast:
		return ">=" + v
	case OpAtMost:
		return "<=" + v
	case OpScale:
		return "*" + v
	case OpAdd:
		if n.Value < 0 {
			return v
		}
		return "+" + v
	}
	return ""
}

// Flag sets a boolean plan field. The zero Flag leaves it alone.
type Flag uint8

// Flags; FlagKeep (the zero value) leaves the field alone.
const (
	FlagKeep Flag = iota
	FlagOn        // field = true
	FlagOff       // field = false
)

func (f Flag) apply(b bool) bool {
	switch f {
	case FlagOn:
		return true
	case FlagOff:
		return false
	}
	return b
}

// PlanPatch declares how a rule changes a plan. Zero fields change nothing.
// Integer fields are rounded to the nearest integer and kept >= 0; scores and
// thresholds are kept in [0, 1].
type PlanPatch struct {
	Mode Mode // "" leaves the mode alone

	RunFAQ, RunDoc, Rerank, UseQueryVariants, PreferTable, FAQDirectExactOnly, Coverage Flag

	FAQTopK, DocTopK, FinalContextTopN, MaxContextChars, MaxContextDocChars Num
	FAQDirectThreshold, MinContextScore                                     Num
}

// Apply applies the patch to pl.
func (pp PlanPatch) Apply(pl *Plan) {
	if pp.Mode != "" {
		pl.Mode = pp.Mode
		if pp.Mode != ModeNone {
			pl.RunDoc = true
		}
	}
	pl.RunFAQ = pp.RunFAQ.apply(pl.RunFAQ)
	pl.RunDoc = pp.RunDoc.apply(pl.RunDoc)
	pl.Rerank = pp.Rerank.apply(pl.Rerank)
	pl.UseQueryVariants = pp.UseQueryVariants.apply(pl.UseQueryVariants)
	pl.PreferTable = pp.PreferTable.apply(pl.PreferTable)
	pl.FAQDirectExactOnly = pp.FAQDirectExactOnly.apply(pl.FAQDirectExactOnly)
	pl.Coverage = pp.Coverage.apply(pl.Coverage)
	applyInt(&pl.FAQTopK, pp.FAQTopK)
	applyInt(&pl.DocTopK, pp.DocTopK)
	applyInt(&pl.FinalContextTopN, pp.FinalContextTopN)
	applyInt(&pl.MaxContextChars, pp.MaxContextChars)
	applyInt(&pl.MaxContextDocChars, pp.MaxContextDocChars)
	applyScore(&pl.FAQDirectThreshold, pp.FAQDirectThreshold)
	applyScore(&pl.MinContextScore, pp.MinContextScore)
}

func applyInt(v *int, n Num) {
	if n.Op == OpKeep {
		return
	}
	x := math.Round(n.apply(float64(*v)))
	switch {
	case !(x > 0): // also NaN
		x = 0
	case x > math.MaxInt32:
		x = math.MaxInt32
	}
	*v = int(x)
}

// applyScore rounds to six decimals so that 0.72-0.08 reads 0.64, not
// 0.6399999999999999, in the plan's JSON.
func applyScore(v *float64, n Num) {
	if n.Op == OpKeep {
		return
	}
	x := n.apply(*v)
	if math.IsNaN(x) {
		return
	}
	*v = math.Round(math.Max(0, math.Min(1, x))*1e6) / 1e6
}

// String lists the patch's operations, e.g. "doc_top_k*0.5 faq_direct_threshold-0.08".
func (pp PlanPatch) String() string {
	var parts []string
	flag := func(name string, f Flag) {
		switch f {
		case FlagOn:
			parts = append(parts, name+"=true")
		case FlagOff:
			parts = append(parts, name+"=false")
		}
	}
	num := func(name string, n Num) {
		if n.Op != OpKeep {
			parts = append(parts, name+n.String())
		}
	}
	if pp.Mode != "" {
		parts = append(parts, "mode="+string(pp.Mode))
	}
	flag("run_faq", pp.RunFAQ)
	flag("run_doc", pp.RunDoc)
	num("faq_top_k", pp.FAQTopK)
	num("doc_top_k", pp.DocTopK)
	flag("rerank", pp.Rerank)
	num("faq_direct_threshold", pp.FAQDirectThreshold)
	num("final_context_top_n", pp.FinalContextTopN)
	num("min_context_score", pp.MinContextScore)
	num("max_context_chars", pp.MaxContextChars)
	num("max_context_doc_chars", pp.MaxContextDocChars)
	flag("use_query_variants", pp.UseQueryVariants)
	flag("prefer_table", pp.PreferTable)
	flag("faq_direct_exact_only", pp.FAQDirectExactOnly)
	flag("coverage", pp.Coverage)
	return strings.Join(parts, " ")
}

// Facts are what a rule's predicate may look at.
type Facts struct {
	Query    Query
	Intent   IntentResult
	Category string           // Category*
	Short    bool             // the question is short (see the package documentation)
	Table    bool             // the question is table-shaped
	Route    router.QueryType // the profiled query type; "" before the question is profiled
}

// Retrieves reports whether the intent leads to retrieval (IsRetrievalIntent).
func (f Facts) Retrieves() bool { return IsRetrievalIntent(f.Intent.Intent) }

// Rule is one row of the plan's rule table. When it fires (When is nil or
// returns true), Patch is applied, then Apply if set, and Tag is appended to
// the plan's reason. When and Apply must be pure and must not panic.
type Rule struct {
	Tag   string             // appended to Plan.Reason; unique in a table
	Stage Stage              // rules apply stage by stage, table order within a stage
	When  func(Facts) bool   // nil: always fires
	Patch PlanPatch          // declarative change
	Apply func(*Plan, Facts) // optional change a patch cannot express
}

// String renders the rule as "stage/tag: patch".
func (r Rule) String() string {
	s := r.Stage.String() + "/" + r.Tag + ": " + r.Patch.String()
	if r.Apply != nil {
		s += " +func"
	}
	return s
}

// MarshalJSON renders the rule for inspection (for example by a CLI that
// lists the table): {"tag", "stage", "patch", "custom"}, where patch is
// PlanPatch.String and custom tells whether an Apply func is set. Predicates
// cannot be rendered; a rule read back from JSON is not supported.
func (r Rule) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep ">=" readable; an outer encoder may still escape
	err := enc.Encode(struct {
		Tag    string `json:"tag"`
		Stage  string `json:"stage"`
		Patch  string `json:"patch"`
		Custom bool   `json:"custom"`
	}{r.Tag, r.Stage.String(), r.Patch.String(), r.Apply != nil})
	return bytes.TrimRight(buf.Bytes(), "\n"), err
}

// ErrInvalidRule reports a rule table that NewWithRules rejects.
var ErrInvalidRule = errors.New("plan: invalid rule")

// DefaultRules returns the default rule table for s (zero fields of s take
// their defaults). Values come from the settings, so a table built for other
// settings follows them. In order:
//
//	intent       faq_first               FAQ_QUERY: doc_top_k halved, FAQ threshold lowered by 0.08, no variants
//	intent       knowledge_doc_enriched  KNOWLEDGE_QUERY: doc_top_k >= doc_complex_query_top_k, one more passage, variants
//	intent       history_aware_follow_up FOLLOW_UP: FAQ and doc top-k >= doc_complex_query_top_k, threshold >= short guard, variants
//	intent       no_retrieval            GREETING, HUMAN_SERVICE, OUT_OF_SCOPE: nothing is searched
//	short_guard  short_query_guard       short, not a follow-up: faq_top_k >= faq_short_query_top_k, doc_top_k <= doc_top_k/2, threshold >= short guard
//	category     pricing_guard           FAQ and doc top-k >= doc_complex_query_top_k, threshold >= pricing, passages >= base+2
//	category     compliance_guard        doc_top_k >= doc_complex_query_top_k, threshold >= compliance
//	category     troubleshooting_guard   doc_top_k >= doc_complex_query_top_k, passages >= base+2
//	category     summary_guard           doc_top_k >= doc_complex_query_top_k, passages >= base+2
//	table        table_row_preferred     doc_top_k >= 1.25*doc_complex_query_top_k, passages >= base+3, prefer_table, exact FAQ only
//	route        route_chitchat          chitchat: nothing is searched
//	route        route_factual           factual: mode dense, doc_top_k = passages = factual_top_k (3), no rerank
//	route        route_analytical        analytical (and every fallback): mode hybrid, doc_top_k = analytical_candidates (50), rerank, passages = analytical_context (8)
//	route        coverage_wide           a question about all of something: hybrid, doc_top_k >= analytical_candidates, rerank, passages >= 1.5*analytical_context, coverage stated
//
// The guards (short, category, table) fire only for retrieval intents. The
// route stage comes last and fires only once the question is profiled: the
// route decides how much to retrieve, so it overrides the candidate and
// passage counts the earlier stages adjusted (their tags stay in the
// reason, so the chain shows what each stage wanted), while the FAQ
// settings, thresholds, table preference and variants of the earlier
// stages stand.
func DefaultRules(s Settings) []Rule {
	s = s.withDefaults()
	wide := float64(s.DocComplexQueryTopK)
	baseCtx := float64(s.FinalContextTopN)
	intent := func(names ...string) func(Facts) bool {
		return func(f Facts) bool {
			for _, n := range names {
				if f.Intent.Intent == n {
					return true
				}
			}
			return false
		}
	}
	category := func(c string) func(Facts) bool {
		return func(f Facts) bool { return f.Retrieves() && f.Category == c }
	}
	return []Rule{
		{Tag: "faq_first", Stage: StageIntent, When: intent(IntentFAQ), Patch: PlanPatch{
			RunFAQ: FlagOn, RunDoc: FlagOn, DocTopK: Scale(0.5),
			FAQDirectThreshold: Add(-defaultFAQFirstThresholdDecrease), UseQueryVariants: FlagOff,
		}},
		{Tag: "knowledge_doc_enriched", Stage: StageIntent, When: intent(IntentKnowledge), Patch: PlanPatch{
			RunFAQ: FlagOn, RunDoc: FlagOn, DocTopK: AtLeast(wide), FinalContextTopN: Add(1), UseQueryVariants: FlagOn,
		}},
		{Tag: "history_aware_follow_up", Stage: StageIntent, When: intent(IntentFollowUp), Patch: PlanPatch{
			RunFAQ: FlagOn, RunDoc: FlagOn, FAQTopK: AtLeast(wide), DocTopK: AtLeast(wide),
			FAQDirectThreshold: AtLeast(s.ShortQueryThreshold), UseQueryVariants: FlagOn,
		}},
		{Tag: "no_retrieval", Stage: StageIntent, When: intent(IntentGreeting, IntentHumanService, IntentOutOfScope), Patch: PlanPatch{
			RunFAQ: FlagOff, RunDoc: FlagOff, Rerank: FlagOff, UseQueryVariants: FlagOff,
			FAQTopK: Set(0), DocTopK: Set(0), FinalContextTopN: Set(0),
		}},
		{Tag: "short_query_guard", Stage: StageShortGuard,
			When: func(f Facts) bool { return f.Short && f.Retrieves() && f.Intent.Intent != IntentFollowUp },
			Patch: PlanPatch{
				FAQTopK: AtLeast(float64(s.FAQShortQueryTopK)), DocTopK: AtMost(math.Ceil(float64(s.DocTopK) / 2)),
				FAQDirectThreshold: AtLeast(s.ShortQueryThreshold),
			}},
		{Tag: "pricing_guard", Stage: StageCategory, When: category(CategoryPricing), Patch: PlanPatch{
			FAQTopK: AtLeast(wide), DocTopK: AtLeast(wide),
			FAQDirectThreshold: AtLeast(s.PricingThreshold), FinalContextTopN: AtLeast(baseCtx + 2),
		}},
		{Tag: "compliance_guard", Stage: StageCategory, When: category(CategoryCompliance), Patch: PlanPatch{
			DocTopK: AtLeast(wide), FAQDirectThreshold: AtLeast(s.ComplianceThreshold),
		}},
		{Tag: "troubleshooting_guard", Stage: StageCategory, When: category(CategoryTroubleshooting), Patch: PlanPatch{
			DocTopK: AtLeast(wide), FinalContextTopN: AtLeast(baseCtx + 2),
		}},
		{Tag: "summary_guard", Stage: StageCategory, When: category(CategorySummary), Patch: PlanPatch{
			DocTopK: AtLeast(wide), FinalContextTopN: AtLeast(baseCtx + 2),
		}},
		{Tag: "table_row_preferred", Stage: StageTable,
			When: func(f Facts) bool { return f.Table && f.Retrieves() },
			Patch: PlanPatch{
				DocTopK: AtLeast(math.Ceil(wide * 1.25)), FinalContextTopN: AtLeast(baseCtx + 3),
				PreferTable: FlagOn, FAQDirectExactOnly: FlagOn,
			}},
		{Tag: "route_chitchat", Stage: StageRoute, When: route(router.Chitchat), Patch: PlanPatch{
			Mode: ModeNone, RunFAQ: FlagOff, RunDoc: FlagOff, Rerank: FlagOff, UseQueryVariants: FlagOff,
			FAQTopK: Set(0), DocTopK: Set(0), FinalContextTopN: Set(0),
		}},
		{Tag: "route_factual", Stage: StageRoute, When: route(router.Factual), Patch: PlanPatch{
			Mode: ModeDense, DocTopK: Set(float64(s.FactualTopK)), FinalContextTopN: Set(float64(s.FactualTopK)), Rerank: FlagOff,
		}},
		{Tag: "route_analytical", Stage: StageRoute, When: route(router.Analytical), Patch: PlanPatch{
			Mode: ModeHybrid, DocTopK: Set(float64(s.AnalyticalCandidates)), FinalContextTopN: Set(float64(s.AnalyticalContext)),
			Rerank: FlagOn,
		}},
		{Tag: "coverage_wide", Stage: StageRoute,
			When: func(f Facts) bool { return f.Query.Coverage && f.Retrieves() && f.Route != router.Chitchat },
			Patch: PlanPatch{
				Mode: ModeHybrid, DocTopK: AtLeast(float64(s.AnalyticalCandidates)), Rerank: FlagOn,
				FinalContextTopN: AtLeast(math.Ceil(1.5 * float64(s.AnalyticalContext))), Coverage: FlagOn,
			}},
	}
}

// route returns a predicate that holds for a question profiled as t whose
// intent retrieves.
func route(t router.QueryType) func(Facts) bool {
	return func(f Facts) bool { return f.Route == t && (t == router.Chitchat || f.Retrieves()) }
}

// NewWithRules returns a Planner that builds plans with a custom rule table
// instead of DefaultRules. Rules are applied stage by stage, keeping table
// order within a stage. The error wraps ErrInvalidRule (an empty, duplicate
// or "_"-edged tag, an unknown stage) or ErrInvalidSettings (see Validate).
func NewWithRules(s Settings, rules []Rule) (*Planner, error) {
	var errs []error
	if err := s.Validate(); err != nil {
		errs = append(errs, err)
	}
	seen := make(map[string]bool, len(rules))
	for i, r := range rules {
		switch {
		case strings.TrimSpace(r.Tag) == "":
			errs = append(errs, fmt.Errorf("%w: rule %d has no tag", ErrInvalidRule, i))
		case strings.HasPrefix(r.Tag, "_") || strings.HasSuffix(r.Tag, "_"):
			errs = append(errs, fmt.Errorf("%w: rule %q: a tag cannot start or end with \"_\" (tags are joined by it)", ErrInvalidRule, r.Tag))
		case seen[r.Tag]:
			errs = append(errs, fmt.Errorf("%w: tag %q is used twice", ErrInvalidRule, r.Tag))
		}
		seen[r.Tag] = true
		if r.Stage >= numStages {
			errs = append(errs, fmt.Errorf("%w: rule %q has unknown stage %d", ErrInvalidRule, r.Tag, r.Stage))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return newPlanner(s.withDefaults(), rules), nil
}

// orderRules copies rules and sorts them by stage, keeping table order
// within a stage.
func orderRules(rules []Rule) []Rule {
	out := append([]Rule(nil), rules...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Stage < out[j].Stage })
	return out
}

// Rules returns the planner's rule table in application order. The slice is
// a copy; the predicates are shared.
func (p *Planner) Rules() []Rule { return append([]Rule(nil), p.rules...) }

// Plan builds the plan for q, an already classified intent and the
// question's profiled query type (route; "" when it has not been profiled,
// which stops before the route stage): the defaults from Settings, then
// every rule that fires, in table order. Reason is the fired tags joined by
// "_", or "default" when none fires. The plan is built even for a
// non-retrieval intent (the default table switches retrieval off for
// those). A plan that searches no documents has Mode none.
func (p *Planner) Plan(q Query, intent IntentResult, route router.QueryType) Plan {
	return p.plan(q, p.analyze(q), intent, route)
}

func (p *Planner) plan(q Query, a *analysis, intent IntentResult, route router.QueryType) Plan {
	s := p.s
	pl := Plan{
		Mode:               ModeHybrid,
		RunFAQ:             true,
		RunDoc:             true,
		FAQTopK:            s.FAQTopK,
		DocTopK:            s.DocTopK,
		Rerank:             !s.DisableRerank,
		FAQDirectThreshold: s.FAQDirectScoreThreshold,
		FinalContextTopN:   s.FinalContextTopN,
		MinContextScore:    s.MinContextScore,
		MaxContextChars:    s.MaxContextChars,
		MaxContextDocChars: s.MaxContextDocChars,
		QuestionCategory:   a.category,
	}
	if pl.QuestionCategory == "" {
		pl.QuestionCategory = CategoryDefault
	}
	f := Facts{
		Query:    q,
		Intent:   intent,
		Category: pl.QuestionCategory,
		Short:    a.short && !a.t.empty(),
		Table:    a.table != "",
		Route:    route,
	}
	var tags []string
	for _, r := range p.rules {
		if r.When != nil && !r.When(f) {
			continue
		}
		r.Patch.Apply(&pl)
		if r.Apply != nil {
			r.Apply(&pl, f)
		}
		tags = append(tags, r.Tag)
	}
	if len(tags) == 0 {
		pl.Reason = "default"
	} else {
		pl.Reason = strings.Join(tags, "_")
	}
	pl.normalize()
	return pl
}

// With returns pl changed by pp, with tag appended to its reason and mode
// and document search kept in agreement; for adjustments made after the
// rule table (a caller asking for k passages, say).
func (pl Plan) With(pp PlanPatch, tag string) Plan {
	pp.Apply(&pl)
	if tag != "" {
		if pl.Reason == "" || pl.Reason == "default" {
			pl.Reason = tag
		} else {
			pl.Reason += "_" + tag
		}
	}
	pl.normalize()
	return pl
}
