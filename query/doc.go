// Package query turns conversational and agent traffic into retrieval-ready
// queries. It is a pure library: no state, no I/O except the model calls of
// LLM, and nothing of any one knowledge base in its word lists (they hold
// general Chinese and English: pronouns, question words, units, time words,
// the words that introduce an order or an error code).
//
// # Techniques
//
// Entities. Entities reads identifiers, numbers and time expressions with a
// hand-written scanner (no regular expressions): product, order and code
// identifiers by shape (P-204, SKU-3381, 0x80070005, CrashLoopBackOff,
// ISO 27001) and by the word that introduces them (订单 A100, order 55120,
// 报错 809); amounts, durations, percentages and measured numbers with
// their units, in digits or Chinese numerals (5000 元, 2万元, $300, 三十天,
// 26 个月, 15%); dates, absolute or relative (2024-05-01, 3 月 5 日, 去年, last
// week, 上周五). A date takes the role of the nearest event verb of its
// clause (bought -> purchase, 签收 -> receipt, 发货 -> shipment, else
// time). Entities compare by meaning: P-204 = P204, 三十天 = 30 天 = 30 days,
// 2万元 = 20,000元, 去年 = last year.
//
// Follow-up rewrite (Offline). A question is read against the recent
// history (Offline.Window messages) by rules, first match wins:
//   - only small talk (router.DetectSmallTalk): nothing to retrieve;
//   - an elided question ("那 X 呢", "X 呢？", "What about X?", "And for X?",
//     "X too?", a bare "P-205？"): the previous question with X in place of
//     the part X replaces — an entity or number of the same kind (P-205
//     replaces P-204, never the reverse; "40" becomes "40 天" when the slot
//     was "30 天"), the phrase after the same preposition (for full-time
//     staff -> for contractors), a member of a contrast set (国内 -> 国际,
//     employees -> interns), a phrase with the same head noun (annual leave
//     -> sick leave, 差旅住宿费 -> 餐费), the one name of the same script
//     (per diem in Tokyo -> in Osaka, VPN 连不上 -> Wi-Fi 连不上), the subject
//     of a Chinese question or its modifier (年假可以折现吗 + 调休呢 ->
//     调休可以折现吗; 北京的住宿标准 + 厦门呢 -> 厦门的住宿标准); with no slot,
//     the phrase is put before the previous question. A bare noun phrase
//     with a question mark ("招待费？") is taken as elided only when such a
//     slot exists; otherwise it is a new topic;
//   - a reference (这个, 它的, 该制度, it, its, this one, that, they, which
//     one): resolved to the identifiers of the most recent exchange (a user
//     message and the replies to it) that names any; one candidate is
//     substituted and recorded in Resolved with the history index it came
//     from, together with the times said with it ("X-300 (purchased last
//     month)"); two or more of the same kind are a Clarify naming all of
//     them, and nothing is retrieved; a plural or "which one" takes them
//     all; none leaves the reference in Unresolved and carries the previous
//     question's topic;
//   - a question without a topic of its own ("现在能退吗？", "How long?"),
//     or a short one with a continuation cue ("Can I still get a refund?"):
//     the previous question's identifiers and times (with their roles) are
//     put before it, or its keywords when it names no identifier;
//   - otherwise the question stands alone and nothing of the history leaks
//     in. The previous question is itself understood first (two levels), so
//     chains of ellipses work ("P-205 呢？" then "那 P-206 呢？").
//
// A pronoun whose antecedent the question itself states is not a reference
// ("为什么哈佛终止了它的…", "where does the blood go after it leaves …"),
// nor is a dummy "it" ("is it possible to", "does it take"), a demonstrative
// before an entity ("这个 P-205") or a time word (这个月, this week). Every
// rewrite keeps every entity of the question.
//
// Decomposition (Split). A compound question is cut into independent
// standalone parts: clauses that are each an ask, or a coordination
// distributed by 分别/各/respectively. A dependent chain is not split: a part
// that refers back (它, its) or follows (然后, then) needs the earlier
// answer, which is multi-hop, not decomposition.
//
// Shape (ShapeOf). Totals, counts of records, complete lists and requests to
// cover everything are flagged: top-k passages are a sample, so such a
// question needs a structured, authorised query or a declared coverage
// strategy. Questions about rules that mention numbers are not aggregates.
//
// Multi-query (Variants, Dedupe). Offline variants are cheap rewordings (a
// keyword form with identifiers first, Chinese numerals as digits); the
// original always comes first. Dedupe merges repeats (spacing, case,
// punctuation, word order) and never merges texts that differ in an entity
// or a number.
//
// Model counterparts (LLM). The rewrite, variants and hypothetical passage
// (HyDE) are asked of a model with strict structured output (a JSON schema
// per task, reflected with invopop/jsonschema) and validated in Go: the
// JSON shape, and Check — the rewrite may not drop, swap or invent an entity
// or number (P-205 may not become P-204, 40 days may not become 30). Values
// the model says it resolved and clarify candidates must occur in the
// history. A hypothetical passage is a search key only, never evidence: it
// must keep the question's identifiers and numbers and name no other
// identifier. Any failure keeps the original question and returns an error
// wrapping ErrRewriteFailed (a timeout still matches
// context.DeadlineExceeded); tokens are charged with llm.Charge.
//
// Measurement (Evaluate). LoadCases reads labelled conversations; Evaluate
// reports outcome accuracy (answer, clarify, chitchat), entity recall and
// wrong-entity rate of the standalone queries, clarify precision and recall,
// sub-question recall and chains kept whole.
//
// # Limits
//
// The rules read surface forms. Chinese has no word boundaries here: topic
// and subject are found with lists of function words and generic verbs, so
// an unusual phrasing can be taken for a follow-up or not. A question with
// no reference and a topic of its own is taken as standalone even when the
// user meant the previous product ("退货运费谁出？" after a product
// question); that errs on the side of not leaking an entity. Elided terms
// that are not entities are placed by heuristics (contrast sets, head nouns,
// the Chinese subject); when none applies the term is put before the whole
// previous question, which then still names the replaced term. Candidates are
// identifiers only: a reference to a person or a policy is left unresolved
// and the previous topic carried. Dates are never computed: 去年 stays 去年.
// Shape and split cues are word lists; an aggregate worded without one is
// missed. The LLM path is only as good as the model, but it cannot change
// the user's entities or numbers unnoticed.
package query
