package plan

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/router"
)

func basePlan(s Settings) Plan {
	s = s.withDefaults()
	return Plan{
		Mode: ModeHybrid, RunFAQ: true, RunDoc: true, FAQTopK: s.FAQTopK, DocTopK: s.DocTopK, Rerank: !s.DisableRerank,
		FAQDirectThreshold: s.FAQDirectScoreThreshold, FinalContextTopN: s.FinalContextTopN,
		MinContextScore: s.MinContextScore, MaxContextChars: s.MaxContextChars,
		MaxContextDocChars: s.MaxContextDocChars, QuestionCategory: CategoryDefault,
	}
}

func ruleByTag(t *testing.T, rules []Rule, tag string) Rule {
	t.Helper()
	for _, r := range rules {
		if r.Tag == tag {
			return r
		}
	}
	t.Fatalf("no rule %q", tag)
	return Rule{}
}

func facts(intent, category string, short, table bool) Facts {
	return Facts{Intent: IntentResult{Intent: intent}, Category: category, Short: short, Table: table}
}

func routed(f Facts, route router.QueryType) Facts {
	f.Route = route
	return f
}

// TestDefaultRuleEach checks every default rule on its own: when it fires,
// when it does not, and what it changes, against settings that differ from
// the defaults so that values read from Settings are told from constants.
func TestDefaultRuleEach(t *testing.T) {
	s := Settings{
		FAQTopK: 40, DocTopK: 30, FinalContextTopN: 3, FAQDirectScoreThreshold: 0.7,
		DocComplexQueryTopK: 50, FAQShortQueryTopK: 60, ShortQueryThreshold: 0.8,
		PricingThreshold: 0.9, ComplianceThreshold: 0.95,
		FactualTopK: 5, AnalyticalCandidates: 60, AnalyticalContext: 10,
	}
	rules := DefaultRules(s)
	tests := []struct {
		tag   string
		stage Stage
		fires []Facts
		skips []Facts
		want  func(Plan) Plan // expected patch result on basePlan(s)
	}{
		{
			tag: "faq_first", stage: StageIntent,
			fires: []Facts{facts(IntentFAQ, CategoryDefault, false, false)},
			skips: []Facts{facts(IntentKnowledge, CategoryDefault, false, false), facts(IntentFollowUp, CategoryDefault, true, false)},
			want: func(p Plan) Plan {
				p.DocTopK = 15
				p.FAQDirectThreshold = 0.62
				return p
			},
		},
		{
			tag: "knowledge_doc_enriched", stage: StageIntent,
			fires: []Facts{facts(IntentKnowledge, CategoryDefault, false, false)},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, false, false)},
			want: func(p Plan) Plan {
				p.DocTopK = 50
				p.FinalContextTopN = 4
				p.UseQueryVariants = true
				return p
			},
		},
		{
			tag: "history_aware_follow_up", stage: StageIntent,
			fires: []Facts{facts(IntentFollowUp, CategoryDefault, true, false)},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, true, false)},
			want: func(p Plan) Plan {
				p.FAQTopK = 50
				p.DocTopK = 50
				p.FAQDirectThreshold = 0.8
				p.UseQueryVariants = true
				return p
			},
		},
		{
			tag: "no_retrieval", stage: StageIntent,
			fires: []Facts{
				facts(IntentGreeting, CategoryDefault, true, false),
				facts(IntentHumanService, CategoryDefault, true, false),
				facts(IntentOutOfScope, CategoryDefault, true, false),
			},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, true, false), facts("CUSTOM", CategoryDefault, true, false)},
			want: func(p Plan) Plan {
				p.RunFAQ, p.RunDoc, p.Rerank = false, false, false
				p.FAQTopK, p.DocTopK, p.FinalContextTopN = 0, 0, 0
				return p
			},
		},
		{
			tag: "short_query_guard", stage: StageShortGuard,
			fires: []Facts{facts(IntentFAQ, CategoryDefault, true, false), facts(IntentKnowledge, CategoryPricing, true, true)},
			skips: []Facts{
				facts(IntentFAQ, CategoryDefault, false, false),
				facts(IntentFollowUp, CategoryDefault, true, false), // follow-ups are rewritten first
				facts(IntentGreeting, CategoryDefault, true, false),
			},
			want: func(p Plan) Plan {
				p.FAQTopK = 60
				p.DocTopK = 15
				p.FAQDirectThreshold = 0.8
				return p
			},
		},
		{
			tag: "pricing_guard", stage: StageCategory,
			fires: []Facts{facts(IntentFAQ, CategoryPricing, false, false), facts(IntentFollowUp, CategoryPricing, true, false)},
			skips: []Facts{facts(IntentFAQ, CategoryCompliance, false, false), facts(IntentOutOfScope, CategoryPricing, false, false)},
			want: func(p Plan) Plan {
				p.FAQTopK = 50
				p.DocTopK = 50
				p.FAQDirectThreshold = 0.9
				p.FinalContextTopN = 5
				return p
			},
		},
		{
			tag: "compliance_guard", stage: StageCategory,
			fires: []Facts{facts(IntentKnowledge, CategoryCompliance, false, false)},
			skips: []Facts{facts(IntentFAQ, CategoryPricing, false, false), facts(IntentHumanService, CategoryCompliance, false, false)},
			want: func(p Plan) Plan {
				p.DocTopK = 50
				p.FAQDirectThreshold = 0.95
				return p
			},
		},
		{
			tag: "troubleshooting_guard", stage: StageCategory,
			fires: []Facts{facts(IntentFAQ, CategoryTroubleshooting, false, false)},
			skips: []Facts{facts(IntentFAQ, CategorySummary, false, false)},
			want: func(p Plan) Plan {
				p.DocTopK = 50
				p.FinalContextTopN = 5
				return p
			},
		},
		{
			tag: "summary_guard", stage: StageCategory,
			fires: []Facts{facts(IntentKnowledge, CategorySummary, false, false)},
			skips: []Facts{facts(IntentKnowledge, CategoryDefault, false, false)},
			want: func(p Plan) Plan {
				p.DocTopK = 50
				p.FinalContextTopN = 5
				return p
			},
		},
		{
			tag: "table_row_preferred", stage: StageTable,
			fires: []Facts{facts(IntentFAQ, CategoryDefault, false, true), facts(IntentFollowUp, CategoryPricing, true, true)},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, false, false), facts(IntentGreeting, CategoryDefault, false, true)},
			want: func(p Plan) Plan {
				p.DocTopK = 63 // ceil(1.25 * 50)
				p.FinalContextTopN = 6
				p.PreferTable = true
				p.FAQDirectExactOnly = true
				return p
			},
		},
		{
			tag: "route_chitchat", stage: StageRoute,
			fires: []Facts{routed(facts(IntentFAQ, CategoryDefault, true, false), router.Chitchat)},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, true, false), routed(facts(IntentFAQ, CategoryDefault, true, false), router.Factual)},
			want: func(p Plan) Plan {
				p.Mode, p.RunFAQ, p.RunDoc, p.Rerank = ModeNone, false, false, false
				p.FAQTopK, p.DocTopK, p.FinalContextTopN = 0, 0, 0
				return p
			},
		},
		{
			tag: "route_factual", stage: StageRoute,
			fires: []Facts{routed(facts(IntentFAQ, CategoryPricing, true, true), router.Factual)},
			skips: []Facts{facts(IntentFAQ, CategoryDefault, false, false), routed(facts(IntentGreeting, CategoryDefault, false, false), router.Factual)},
			want: func(p Plan) Plan {
				p.Mode, p.Rerank = ModeDense, false
				p.DocTopK, p.FinalContextTopN = 5, 5
				return p
			},
		},
		{
			tag: "route_analytical", stage: StageRoute,
			fires: []Facts{routed(facts(IntentKnowledge, CategoryDefault, false, false), router.Analytical)},
			skips: []Facts{routed(facts(IntentKnowledge, CategoryDefault, false, false), router.Factual), routed(facts(IntentOutOfScope, CategoryDefault, false, false), router.Analytical)},
			want: func(p Plan) Plan {
				p.Mode, p.Rerank = ModeHybrid, true
				p.DocTopK, p.FinalContextTopN = 60, 10
				return p
			},
		},
		{
			tag: "coverage_wide", stage: StageRoute,
			fires: []Facts{{Query: Query{Coverage: true}, Intent: IntentResult{Intent: IntentKnowledge}, Route: router.Factual}},
			skips: []Facts{facts(IntentKnowledge, CategorySummary, false, false), {Query: Query{Coverage: true}, Intent: IntentResult{Intent: IntentKnowledge}, Route: router.Chitchat}},
			want: func(p Plan) Plan {
				p.Mode, p.Rerank, p.Coverage = ModeHybrid, true, true
				p.DocTopK, p.FinalContextTopN = 60, 15
				return p
			},
		},
	}
	if len(tests) != len(rules) {
		t.Errorf("default table has %d rules, test covers %d", len(rules), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.tag, func(t *testing.T) {
			r := ruleByTag(t, rules, tc.tag)
			if r.Stage != tc.stage {
				t.Errorf("stage = %v, want %v", r.Stage, tc.stage)
			}
			for _, f := range tc.fires {
				if !r.When(f) {
					t.Errorf("does not fire for %+v", f)
				}
			}
			for _, f := range tc.skips {
				if r.When(f) {
					t.Errorf("fires for %+v", f)
				}
			}
			got := basePlan(s)
			r.Patch.Apply(&got)
			if want := tc.want(basePlan(s)); got != want {
				t.Errorf("patch result\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestGuardsCombine runs whole questions through Plan and checks that the
// stages stack in order.
func TestGuardsCombine(t *testing.T) {
	p := New(testSettings)
	hist := []string{"报销流程是什么"}
	tests := []struct {
		name   string
		q      Query
		reason string
		check  func(t *testing.T, pl Plan)
	}{
		{
			name: "short guard alone shrinks docs and raises the FAQ bar",
			q:    Query{Text: "年假有几天"}, reason: "faq_first_short_query_guard",
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "faq_top_k", pl.FAQTopK, 30)
				wantInt(t, "doc_top_k", pl.DocTopK, 10)
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.78)
			},
		},
		{
			name: "compliance after knowledge",
			q:    Query{Text: "员工个人信息的保密要求以及违规处理流程"}, reason: "knowledge_doc_enriched_compliance_guard",
			check: func(t *testing.T, pl Plan) {
				wantString(t, "question_category", pl.QuestionCategory, CategoryCompliance)
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.86)
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 5)
			},
		},
		{
			name: "follow-up skips the short guard but keeps category guards",
			q:    Query{Text: "那费用呢", History: hist}, reason: "history_aware_follow_up_pricing_guard",
			check: func(t *testing.T, pl Plan) {
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.84)
				wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
			},
		},
		{
			name: "troubleshooting short question",
			q:    Query{Text: "VPN 连不上怎么处理"}, reason: "faq_first_short_query_guard_troubleshooting_guard",
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 6)
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.78)
			},
		},
		{
			name: "summary knowledge question",
			q:    Query{Text: "总结一下新员工入职第一周需要完成的所有事项和对应的负责部门"}, reason: "knowledge_doc_enriched_summary_guard",
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 6)
				wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
			},
		},
		{
			name: "table wins the context count over pricing",
			q:    Query{Text: "付款节点明细表里超过 5000 的审批要求是什么"}, reason: "faq_first_pricing_guard_table_row_preferred",
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 7)
				wantInt(t, "doc_top_k", pl.DocTopK, 30)
				wantBool(t, "faq_direct_exact_only", pl.FAQDirectExactOnly, true)
			},
		},
		{
			name: "english pricing",
			q:    Query{Text: "Who approves reimbursement expenses over 5000?"}, reason: "faq_first_short_query_guard_pricing_guard",
			check: func(t *testing.T, pl Plan) {
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.84)
				wantInt(t, "doc_top_k", pl.DocTopK, 24)
			},
		},
		{
			name: "english compliance",
			q:    Query{Text: "What personal data does our privacy policy allow us to share with external partners?"}, reason: "faq_first_compliance_guard",
			check: func(t *testing.T, pl Plan) {
				wantFloat(t, "faq_direct_threshold", pl.FAQDirectThreshold, 0.86)
			},
		},
		{
			name: "english table",
			q:    Query{Text: "What is the payment amount field in the materials list?"}, reason: "faq_first_pricing_guard_table_row_preferred",
			check: func(t *testing.T, pl Plan) {
				wantBool(t, "prefer_table", pl.PreferTable, true)
				wantInt(t, "final_context_top_n", pl.FinalContextTopN, 7)
			},
		},
		{
			name: "english follow-up",
			q:    Query{Text: "what about approval?", History: []string{"How do I submit a travel claim?"}}, reason: "history_aware_follow_up",
			check: func(t *testing.T, pl Plan) {
				wantInt(t, "faq_top_k", pl.FAQTopK, 24)
				wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := p.Plan(tc.q, p.ClassifyIntent(tc.q), "")
			wantString(t, "reason", pl.Reason, tc.reason)
			tc.check(t, pl)
		})
	}
}

func TestPlanForDirectIntent(t *testing.T) {
	p := New(testSettings)
	q := Query{Text: "你好"}
	pl := p.Plan(q, p.ClassifyIntent(q), "")
	if pl.RunFAQ || pl.RunDoc || pl.Reason != "no_retrieval" {
		t.Errorf("plan for a greeting = %+v, want nothing searched, reason no_retrieval", pl)
	}
	if pl.FAQDirect(1, true) {
		t.Error("FAQDirect true on a plan that searches no FAQ")
	}
}

func TestCustomRuleTable(t *testing.T) {
	rules := []Rule{
		// Given out of stage order: the table stage must still apply last.
		{Tag: "tables_first", Stage: StageTable, When: func(f Facts) bool { return f.Table },
			Patch: PlanPatch{FinalContextTopN: Set(9)}},
		{Tag: "vip", Stage: StageIntent,
			When:  func(f Facts) bool { return strings.Contains(f.Query.Text, "VIP") },
			Patch: PlanPatch{FinalContextTopN: Set(2), UseQueryVariants: FlagOn},
			Apply: func(pl *Plan, f Facts) { pl.QuestionCategory = "vip" }},
		{Tag: "always", Stage: StageCategory, Patch: PlanPatch{MaxContextChars: Scale(2)}},
	}
	p, err := NewWithRules(Settings{}, rules)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Rules()
	if len(got) != 3 || got[0].Tag != "vip" || got[1].Tag != "always" || got[2].Tag != "tables_first" {
		t.Fatalf("Rules() not in stage order: %v", got)
	}
	got[0].Tag = "mutated"
	if p.Rules()[0].Tag != "vip" {
		t.Error("Rules() exposes the planner's own slice")
	}

	q := Query{Text: "VIP 客户的付款清单"}
	pl := p.Plan(q, p.ClassifyIntent(q), "")
	wantString(t, "reason", pl.Reason, "vip_always_tables_first")
	wantInt(t, "final_context_top_n", pl.FinalContextTopN, 9)
	wantBool(t, "use_query_variants", pl.UseQueryVariants, true)
	wantString(t, "question_category", pl.QuestionCategory, "vip")
	wantInt(t, "max_context_chars", pl.MaxContextChars, 2*DefaultMaxContextChars)
	// None of the default rules ran.
	wantInt(t, "doc_top_k", pl.DocTopK, DefaultDocTopK)

	// An empty table: the plan is the settings' baseline.
	empty, err := NewWithRules(Settings{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl = empty.Plan(q, empty.ClassifyIntent(q), "")
	if want := basePlan(Settings{}); pl.Reason != "default" || pl.DocTopK != want.DocTopK || pl.FAQTopK != want.FAQTopK {
		t.Errorf("plan with no rules = %+v, want the baseline with reason default", pl)
	}
}

func TestNewWithRulesErrors(t *testing.T) {
	tests := []struct {
		name  string
		s     Settings
		rules []Rule
		is    error
	}{
		{"empty tag", Settings{}, []Rule{{Tag: " "}}, ErrInvalidRule},
		{"duplicate tag", Settings{}, []Rule{{Tag: "a"}, {Tag: "a"}}, ErrInvalidRule},
		{"tag edged with _", Settings{}, []Rule{{Tag: "a_"}}, ErrInvalidRule},
		{"unknown stage", Settings{}, []Rule{{Tag: "a", Stage: 9}}, ErrInvalidRule},
		{"threshold above 1", Settings{PricingThreshold: 1.5}, nil, ErrInvalidSettings},
		{"NaN threshold", Settings{FAQDirectScoreThreshold: math.NaN()}, nil, ErrInvalidSettings},
		{"bad language", Settings{DefaultLanguage: "fr"}, nil, ErrInvalidSettings},
		{"duplicate source", Settings{Sources: []Source{{Name: "a"}, {Name: "A"}}}, nil, ErrInvalidSettings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewWithRules(tc.s, tc.rules)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if p != nil {
				t.Error("planner returned with an error")
			}
		})
	}
	if _, err := NewWithRules(Settings{}, DefaultRules(Settings{})); err != nil {
		t.Errorf("default table rejected: %v", err)
	}
}

func TestNewRepairsSettings(t *testing.T) {
	// New never fails: out-of-range values are repaired.
	p := New(Settings{PricingThreshold: 7, FAQTopK: -3, MinContextScore: -1, DefaultLanguage: "fr"})
	s := p.Settings()
	if s.PricingThreshold != 1 || s.FAQTopK != DefaultFAQTopK || s.MinContextScore != 0 || s.DefaultLanguage != "zh" {
		t.Errorf("repaired settings = %+v", s)
	}
	q := Query{Text: "报销费用超过5000需要谁审批"}
	if pl := p.Plan(q, p.ClassifyIntent(q), ""); pl.FAQDirectThreshold != 1 {
		t.Errorf("pricing threshold clamped to 1, plan has %v", pl.FAQDirectThreshold)
	}
}

func TestSettingsDefaults(t *testing.T) {
	s := Settings{}.withDefaults()
	want := Settings{
		FAQTopK: 20, DocTopK: 20, FinalContextTopN: 4, FAQDirectScoreThreshold: 0.72, DocComplexQueryTopK: 24,
		FAQShortQueryTopK: 30, ShortQueryThreshold: 0.78, PricingThreshold: 0.84, ComplianceThreshold: 0.86,
	}
	if s.FAQTopK != want.FAQTopK || s.DocTopK != want.DocTopK || s.FinalContextTopN != want.FinalContextTopN ||
		s.FAQDirectScoreThreshold != want.FAQDirectScoreThreshold || s.DocComplexQueryTopK != want.DocComplexQueryTopK ||
		s.FAQShortQueryTopK != want.FAQShortQueryTopK || s.ShortQueryThreshold != want.ShortQueryThreshold ||
		s.PricingThreshold != want.PricingThreshold || s.ComplianceThreshold != want.ComplianceThreshold {
		t.Errorf("defaults = %+v, want the documented %+v", s, want)
	}
	if s.FactualTopK != 3 || s.AnalyticalCandidates != 50 || s.AnalyticalContext != 8 {
		t.Errorf("route sizes = %d, %d, %d; want 3, 50, 8", s.FactualTopK, s.AnalyticalCandidates, s.AnalyticalContext)
	}
	if s.DisableRerank || s.MinContextScore <= 0 || s.MaxContextChars < s.MaxContextDocChars || s.Sources != nil {
		t.Errorf("package defaults look wrong: %+v", s)
	}
	// DisableRerank reaches the plan.
	p := New(Settings{DisableRerank: true})
	q := Query{Text: "年假有几天"}
	if p.Plan(q, p.ClassifyIntent(q), "").Rerank {
		t.Error("DisableRerank ignored")
	}
}

func TestPlanPatchOps(t *testing.T) {
	tests := []struct {
		patch PlanPatch
		check func(Plan) bool
		str   string
	}{
		{PlanPatch{DocTopK: Set(7)}, func(p Plan) bool { return p.DocTopK == 7 }, "doc_top_k=7"},
		{PlanPatch{DocTopK: AtLeast(25)}, func(p Plan) bool { return p.DocTopK == 25 }, "doc_top_k>=25"},
		{PlanPatch{DocTopK: AtLeast(5)}, func(p Plan) bool { return p.DocTopK == 20 }, "doc_top_k>=5"},
		{PlanPatch{DocTopK: AtMost(5)}, func(p Plan) bool { return p.DocTopK == 5 }, "doc_top_k<=5"},
		{PlanPatch{DocTopK: Scale(0.25)}, func(p Plan) bool { return p.DocTopK == 5 }, "doc_top_k*0.25"},
		{PlanPatch{DocTopK: Add(-100)}, func(p Plan) bool { return p.DocTopK == 0 }, "doc_top_k-100"},
		{PlanPatch{FAQDirectThreshold: Add(0.5)}, func(p Plan) bool { return p.FAQDirectThreshold == 1 }, "faq_direct_threshold+0.5"},
		{PlanPatch{FAQDirectThreshold: Add(-0.08)}, func(p Plan) bool { return p.FAQDirectThreshold == 0.64 }, "faq_direct_threshold-0.08"},
		{PlanPatch{MinContextScore: Set(math.NaN())}, func(p Plan) bool { return p.MinContextScore == DefaultMinContextScore }, "min_context_score=NaN"},
		{PlanPatch{PreferTable: FlagOn, Rerank: FlagOff}, func(p Plan) bool { return p.PreferTable && !p.Rerank }, "rerank=false prefer_table=true"},
		{PlanPatch{}, func(p Plan) bool { return p == basePlan(Settings{}) }, ""},
	}
	for _, tc := range tests {
		pl := basePlan(Settings{})
		tc.patch.Apply(&pl)
		if !tc.check(pl) {
			t.Errorf("%q gave %+v", tc.str, pl)
		}
		if got := tc.patch.String(); got != tc.str {
			t.Errorf("String() = %q, want %q", got, tc.str)
		}
	}
	if s := (Rule{Tag: "x", Stage: StageTable, Patch: PlanPatch{DocTopK: Set(1)}, Apply: func(*Plan, Facts) {}}).String(); s != "table/x: doc_top_k=1 +func" {
		t.Errorf("Rule.String() = %q", s)
	}
}

func TestFAQDirect(t *testing.T) {
	fuzzy := Plan{RunFAQ: true, FAQDirectThreshold: 0.8}
	exactOnly := Plan{RunFAQ: true, FAQDirectThreshold: 0.8, FAQDirectExactOnly: true}
	noFAQ := Plan{FAQDirectThreshold: 0.8}
	tests := []struct {
		name  string
		pl    Plan
		score float64
		exact bool
		want  bool
	}{
		{"above threshold, similar", fuzzy, 0.9, false, true},
		{"at threshold", fuzzy, 0.8, false, true},
		{"below threshold, even exact", fuzzy, 0.79, true, false},
		{"exact-only plan, similar hit", exactOnly, 0.99, false, false},
		{"exact-only plan, exact hit", exactOnly, 0.85, true, true},
		{"exact-only plan, exact but low", exactOnly, 0.5, true, false},
		{"plan without FAQ search", noFAQ, 1, true, false},
		{"NaN score", fuzzy, math.NaN(), true, false},
	}
	for _, tc := range tests {
		if got := tc.pl.FAQDirect(tc.score, tc.exact); got != tc.want {
			t.Errorf("%s: FAQDirect(%v, %v) = %v, want %v", tc.name, tc.score, tc.exact, got, tc.want)
		}
	}
}

func TestExactMatch(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"报销流程是什么？", "报销流程是什么", true},
		{"报销 流程 是什么", "报销流程是什么?", true},
		{"ＶＰＮ连不上", "vpn连不上", true},
		{"How do I reset my password?", "how do i reset my password", true},
		{"C++ 培训", "C 培训", false},
		{"报销流程是什么", "报销流程有哪些", false},
		{"", "", false},
		{"？", "!", false},
		{"\xff报销", "报销", true},
	}
	for _, tc := range tests {
		if got := ExactMatch(tc.a, tc.b); got != tc.want {
			t.Errorf("ExactMatch(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestRuleJSON(t *testing.T) {
	b, err := json.Marshal(New(testSettings).Rules()[4])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"tag": "short_query_guard", "stage": "short_guard",
		"patch": "faq_top_k>=30 doc_top_k<=10 faq_direct_threshold>=0.78", "custom": false,
	}
	if len(got) != len(want) {
		t.Errorf("rule JSON %s, want %v", b, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("rule JSON %s: %s = %v, want %v", b, k, got[k], v)
		}
	}
}
