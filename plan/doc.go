// Package plan is adaptrag's retrieval policy: the cheap, deterministic
// steps taken before any retrieval. For one user turn it decides whether to
// answer directly or retrieve, classifies the intent, and builds the Plan,
// the one parameter set the retrieval stages read. It is pure logic: no I/O
// and no model calls.
//
//	p := plan.New(plan.Settings{})                   // zero value: the defaults
//	res := p.Prepare(plan.Query{Text: q}, route)     // decision, then intent and plan
//
// # Decision
//
// Decide checks, in order: an empty question; safety (prompt injection,
// requests for harmful content, creative writing no knowledge base answers;
// clear cases only); a request for a human; a pure greeting or pleasantry;
// the source boundary. The first four are direct answers: the Decision names
// the reason and the question's language (CJK: Chinese, Latin: English), and
// the caller words the reply. A greeting is what router.DetectSmallTalk
// reports as only small talk (the one small-talk lexicon of the product):
// "你好，顺便问下电子发票多久能开好" carries a real question and goes to
// retrieval. The source boundary fires when the caller selected a source
// whose keywords do not occur and another source's keywords do; the
// decision names both (SourceLabel gives their display names). With no
// source table (the default) there is no boundary and no suggestion.
//
// An empty question (no letter or digit after dropping invalid UTF-8) is a
// direct answer with reason "empty_query"; its intent is OUT_OF_SCOPE.
//
// # Intent
//
// FOLLOW_UP needs a non-blank history and a short, elliptical question: it
// opens like a continuation (那…, what about…, and…), points back (这个, it)
// or ends in 呢. KNOWLEDGE_QUERY is a question that needs several passages put
// together: it asks to explain, compare or summarise (为什么, 区别, 对比,
// explain, compare), where a rule is documented (在哪里查看, where can I
// find), for a whole process (流程, 步骤, procedure), or chains several asks
// with a clause connective (以及, 并且, as well as). Everything else is a
// single concrete ask, FAQ_QUERY: "需要准备哪些资料和审批信息" joins two nouns
// with 和 but asks one thing. Confidences are fixed per rule.
//
// # Short questions
//
// Length is measured in content units: one per CJK character, one per number
// whatever its digits (a number is one token to a lexical index and one fact),
// 1.5 per Latin word (the mean length of a Chinese word, so a question and its
// translation measure alike); punctuation and a trailing sentence particle
// (吗, 呢, 吧, …) count nothing. A question of at most
// Settings.ShortQueryMaxUnits (default 12) units is short:
// "报销费用超过5000需要谁审批" is 11 characters and one number, 12 units, short;
// "材料清单里的付款金额字段是什么" is 15 units, not short.
//
// # Categories and tables
//
// The question category is a risk label: pricing, compliance,
// troubleshooting, summary or default. When several match, the costliest to
// get wrong wins: compliance, pricing, troubleshooting, summary. A question is
// table-shaped when it names a structure (清单, 台账, 字段, 明细, 表格, list of,
// ledger, column, row, table) or two row items together (金额 and 责任人).
//
// # Plan
//
// Plan starts from Settings and applies an ordered rule table (DefaultRules):
// intent rules, the short-question guard, category guards, table
// preference, and last the route: the query type the router profiled
// (chitchat: nothing; factual: dense top 3; analytical or any fallback:
// hybrid 50 reranked to 8). Each rule is a predicate plus a declarative
// PlanPatch (set, at least, at most, scale, add), and each rule that fires
// appends its tag to the plan's reason, e.g.
// "faq_first_short_query_guard_pricing_guard_route_factual". Called without
// a route, Plan stops before the route stage: that is the plan the rules
// alone give. Rules returns the table; NewWithRules builds a Planner with
// another. The source filter is not part of the plan: see EffectiveSource.
//
// # Keywords
//
// Keyword lists (Source.Keywords and the built-in cues) share one syntax: a
// keyword with a CJK character matches as a substring of the question with
// punctuation and spaces removed; any other keyword matches whole words in
// sequence, and a trailing "*" lets the last word match as a prefix
// ("reimburs*"). Matching ignores case and full-width forms.
package plan
