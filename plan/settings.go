package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Defaults applied by Settings when a field is left at its zero value. The
// first nine are the seed's baseline; the context limits are this package's
// choice (see Settings).
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
	DefaultMinContextScore         = 0.25
	DefaultMaxContextChars         = 6000
	DefaultMaxContextDocChars      = 1500
	DefaultShortQueryMaxUnits      = 12
	DefaultLanguage                = "zh"
)

const (
	langZH, langEN = "zh", "en"
	// defaultFAQFirstThresholdDecrease is how far faq_first lowers the FAQ
	// threshold: 0.72 -> 0.64 in the seed.
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

	// DisableRerank turns the rerank stage off in every plan (default: on).
	DisableRerank bool `json:"disable_rerank"`
	// MinContextScore is the lowest relevance score (0..1, after rerank) a
	// passage needs to enter the prompt; default 0.25, a floor that drops
	// clearly unrelated passages without second-guessing the reranker.
	// Negative means no floor.
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
	// DefaultLanguage ("zh" or "en") picks the fixed texts for a question
	// with no letters in either script; default "zh".
	DefaultLanguage string `json:"default_language"`

	// Texts holds the fixed answers of direct routes.
	Texts Texts `json:"texts"`
	// Sources is the keyword table used for source suggestions and the
	// source boundary; nil means DefaultSources().
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

// Texts are the fixed answers of the direct routes. An empty field takes the
// built-in wording for that language. SourceBoundary is a template:
// "{suggested}" and "{selected}" are replaced by the source labels.
type Texts struct {
	Greeting       Text `json:"greeting"`
	HumanService   Text `json:"human_service"`
	Safety         Text `json:"safety"`
	SourceBoundary Text `json:"source_boundary"`
	Empty          Text `json:"empty"`
}

// Source is one knowledge source a caller can select, with the keywords that
// mark a question as belonging to it. Keyword syntax: see the package doc.
type Source struct {
	Name     string   `json:"name"`  // the value callers pass as Query.Source, e.g. "finance"
	Label    Text     `json:"label"` // display name used in hints; Name when empty
	Keywords []string `json:"keywords"`
}

var defaultTexts = Texts{
	Greeting: Text{
		ZH: "您好！我是企业知识库助手，可以帮您查询人事、财务、IT、行政、售后和法务方面的制度与流程，请直接输入您的问题。",
		EN: "Hello! I am the company knowledge assistant. Ask me about HR, finance, IT, office administration, after-sales or legal policies and processes.",
	},
	HumanService: Text{
		ZH: "好的，正在为您转接人工客服，请稍候。",
		EN: "Sure, I am transferring you to a human agent. Please hold on.",
	},
	Safety: Text{
		ZH: "抱歉，这个请求超出了企业知识库助手的服务范围，我无法提供帮助。",
		EN: "Sorry, that request is outside what the company knowledge assistant can help with.",
	},
	SourceBoundary: Text{
		ZH: "这个问题看起来属于「{suggested}」分类，当前选择的是「{selected}」。请切换到「{suggested}」后再提问。",
		EN: "This question looks like it belongs to {suggested}, but {selected} is selected. Please switch to {suggested} and ask again.",
	},
	Empty: Text{
		ZH: "请输入您的问题。",
		EN: "Please type your question.",
	},
}

// DefaultSources returns a fresh copy of the built-in source table: hr,
// finance, it, admin (meeting rooms, office), after_sales (returns, warranty,
// products) and legal (contracts, compliance).
func DefaultSources() []Source {
	return []Source{
		{Name: "hr", Label: Text{"人事", "HR"}, Keywords: []string{
			"入职", "离职", "招聘", "面试", "年假", "假期", "请假", "休假", "病假", "产假", "社保", "公积金",
			"薪资", "工资", "绩效", "考勤", "转正", "试用期", "培训",
			"onboard*", "offboard*", "leave", "vacation*", "payroll", "salary", "salaries", "hiring", "recruit*",
			"performance review*", "attendance", "probation"}},
		{Name: "finance", Label: Text{"财务", "Finance"}, Keywords: []string{
			"报销", "发票", "付款", "费用", "预算", "差旅", "借款", "财务", "打款", "报账",
			"reimburs*", "invoice*", "expense*", "payment*", "budget*", "finance", "travel cost*"}},
		{Name: "it", Label: Text{"IT", "IT"}, Keywords: []string{
			"电脑", "笔记本", "vpn", "密码", "邮箱", "网络", "wifi", "打印机", "账号", "软件", "系统登录", "蓝屏", "显示器",
			"password*", "laptop*", "computer*", "email", "e-mail", "wi-fi", "printer*", "software", "network", "login", "log in"}},
		{Name: "admin", Label: Text{"行政", "Admin"}, Keywords: []string{
			"会议室", "办公室", "工位", "门禁", "快递", "访客", "办公用品", "停车", "食堂", "工牌",
			"meeting room*", "office", "desk*", "badge*", "visitor*", "parking", "stationery", "canteen"}},
		{Name: "after_sales", Label: Text{"售后", "After-sales"}, Keywords: []string{
			"退货", "换货", "保修", "维修", "售后", "退款", "质保", "产品", "商品", "订单",
			"return*", "warrant*", "repair*", "refund*", "product*", "order*"}},
		{Name: "legal", Label: Text{"法务", "Legal"}, Keywords: []string{
			"合同", "合规", "法务", "协议", "隐私", "保密", "知识产权", "诉讼", "律师",
			"contract*", "compliance", "legal", "nda", "privacy", "agreement*", "gdpr", "lawsuit*", "lawyer*"}},
	}
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
	s.Texts = s.Texts.withDefaults()
	if s.Sources == nil {
		s.Sources = DefaultSources()
	} else {
		s.Sources = cloneSources(s.Sources)
	}
	return s
}

func (t Texts) withDefaults() Texts {
	fill := func(v *Text, d Text) {
		if v.ZH == "" {
			v.ZH = d.ZH
		}
		if v.EN == "" {
			v.EN = d.EN
		}
	}
	fill(&t.Greeting, defaultTexts.Greeting)
	fill(&t.HumanService, defaultTexts.HumanService)
	fill(&t.Safety, defaultTexts.Safety)
	fill(&t.SourceBoundary, defaultTexts.SourceBoundary)
	fill(&t.Empty, defaultTexts.Empty)
	return t
}

func cloneSources(in []Source) []Source {
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
