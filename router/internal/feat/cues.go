package feat

import "strings"

// Hand-written cue lists. Entries are normalized (lower-case, no
// punctuation). Latin entries match whole words; Han entries match
// anywhere.
var (
	// requestPrefixes wrap a question in a polite request ("do you know
	// who wrote hamlet"). They are stripped only when what follows has
	// substance, so "tell me a joke" stays as it is.
	requestPrefixes = []string{
		"能不能告诉我", "能告诉我", "可以告诉我", "告诉我", "你知道", "您知道", "你知不知道", "帮我查一下", "帮我查查", "帮我查",
		"帮我看看", "帮我看一下", "请帮我", "帮我", "我想知道", "我想了解一下", "我想了解", "我想问问", "想知道", "请告诉我",
		"can you tell me", "could you tell me", "can you please tell me", "could you please tell me", "please tell me",
		"tell me", "do you know", "do you happen to know", "i want to know",
		"i wonder", "i was wondering", "i would like to know", "can you please", "could you please", "can you", "could you", "would you",
		"help me understand", "help me find out", "i need to know", "any idea",
	}
	cmpCues = []string{
		"对比", "比较", "区别", "差异", "差别", "异同", "不同", "相比", "哪个更", "哪一个更", "优缺点", "利弊", "优劣",
		"compare", "compared", "comparison", "difference", "differences", "differ", "versus", "vs",
		"contrast", "pros and cons", "both", "either", "neither", "which one", "same",
		"older", "younger", "earlier", "later", "first", "longer", "larger", "more",
	}
	// contrastCues ask outright to compare subjects: a question holding
	// one needs evidence about each side. Narrower than cmpCues, which
	// also hold comparatives of one fact ("which came first", "more"), and
	// without 比较 alone, which is also the adverb "rather" (比较贵).
	contrastCues = []string{
		"对比", "区别", "差异", "差别", "异同", "相比", "相较", "优缺点", "利弊", "优劣", "比较一下", "比较下", "做比较", "进行比较",
		"compare", "compared", "comparing", "comparison", "difference", "differences", "differ", "differs",
		"versus", "vs", "contrast", "pros and cons",
	}
	whyCues = []string{
		"为什么", "为何", "原因", "怎么会", "如何影响", "有什么影响", "机制", "原理",
		"why", "how does", "how do", "how did", "how would", "explain", "reason", "reasons",
	}
	analyzeCues = []string{
		"分析", "总结", "归纳", "整理", "梳理", "评估", "影响", "综合", "汇总", "全面", "方案", "建议", "趋势", "规划",
		"analyze", "analyse", "analysis", "summarize", "summarise", "summary", "overview", "impact",
		"implications", "evaluate", "assess", "walk me through", "trade offs", "tradeoffs", "recommend",
		"strategy", "plan",
	}
	bizCues = []string{
		"报销", "发票", "年假", "请假", "病假", "事假", "调休", "退货", "退款", "换货", "合同", "会议室", "审批",
		"采购", "工资", "薪资", "社保", "公积金", "加班", "出差", "差旅", "入职", "离职", "考勤", "打卡", "密码",
		"邮箱", "账号", "订单", "快递", "物流", "保修", "发货", "流程", "制度", "政策", "规定", "标准", "申请",
		"vpn", "wifi", "reimburse", "reimbursement", "expense", "expenses", "invoice", "invoices", "leave",
		"refund", "refunds", "return", "returns", "contract", "contracts", "meeting room", "approval",
		"purchase", "payroll", "salary", "overtime", "travel", "onboarding", "password", "order", "orders",
		"shipping", "warranty", "policy", "policies", "procedure", "process", "deadline", "laptop", "vendor",
	}
	qCues = []string{
		"什么", "多少", "几", "哪", "谁", "怎么", "如何", "是否", "多久", "多长", "何时", "何地",
		"what", "when", "where", "who", "whom", "whose", "which", "how", "how many", "how much", "how long",
	}
	youCues = []string{"你", "您", "you", "your", "yours", "yourself", "u", "ur"}
	meCues  = []string{"我", "i", "im", "me", "my"}
	// clauseCues join parts of a compound question; they feed complexity.
	clauseCues = []string{"并且", "以及", "同时", "另外", "而且", "还有", "分别", "and", "also", "as well as", "then"}
)

// hasCue reports whether norm contains one of cues (Latin cues on word
// boundaries).
func hasCue(norm string, cues []string) bool {
	for _, c := range cues {
		if containsCue(norm, c) {
			return true
		}
	}
	return false
}

func countCues(norm string, cues []string) int {
	n := 0
	for _, c := range cues {
		if containsCue(norm, c) {
			n++
		}
	}
	return n
}

func containsCue(norm, c string) bool {
	if c == "" {
		return false
	}
	if c[0] >= 0x80 { // Han cue: substring match
		return strings.Contains(norm, c)
	}
	for i := 0; ; {
		j := strings.Index(norm[i:], c)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(c)
		if (j == 0 || !isWordByte(norm[j-1])) && (end == len(norm) || !isWordByte(norm[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// StripGreeting removes leading greeting and filler phrases from normalized
// text: the opener phrases of the small-talk lexicon (greetings, thanks,
// "ok", "请问", "quick question", ...). It returns the rest (maybe empty, and
// always a suffix of norm) and whether anything was removed.
func StripGreeting(norm string) (rest string, stripped bool) {
	rest = norm
	for {
		cut := false
		for _, g := range greetPrefixes {
			if !strings.HasPrefix(rest, g) {
				continue
			}
			after := rest[len(g):]
			if g[0] < 0x80 && after != "" && isWordByte(after[0]) && after[0] < 0x80 {
				continue // "hi" must not eat "history"
			}
			rest = strings.TrimLeft(after, " ")
			cut, stripped = true, true
			break
		}
		if !cut {
			break
		}
	}
	for _, g := range requestPrefixes {
		if !strings.HasPrefix(rest, g) {
			continue
		}
		after := rest[len(g):]
		if g[0] < 0x80 && after != "" && after[0] != ' ' {
			continue // a Latin prefix must end on a word boundary
		}
		after = strings.TrimLeft(after, " ")
		if after != "" && hasSubstance(after) {
			return after, true
		}
		break
	}
	return rest, stripped
}

// hasSubstance reports a question word, a business term or an analysis cue.
func hasSubstance(s string) bool {
	return hasCue(s, qCues) || hasCue(s, bizCues) || hasCue(s, cmpCues) || hasCue(s, whyCues) || hasCue(s, analyzeCues)
}

// Analysis is what the hand-written rules see in a query.
type Analysis struct {
	Norm     string // normalized full text
	Rest     string // Norm without leading greetings
	Greeting bool   // a greeting or filler opener was removed
	Toks     []Token
	Counts   Counts
	Cues     []string // cue feature names, e.g. "cmp", "why", "greet+rest"
	Clauses  int      // clause joiners found
	Compare  bool
	Contrast bool // asks outright to compare subjects (contrastCues)
	// Substance: the rest asks something (question word, yes/no question,
	// business term, comparison), is not about "you", the assistant, and is
	// not only small talk ("how is it going", "有人吗").
	Substance bool
	// Talk is what the small-talk lexicon finds in the whole text (its
	// Conv flag looks at Rest only).
	Talk Talk
	// Chat reports positive evidence of conversation, without which the
	// model may not answer chitchat: the text is only small talk; or it has
	// no identifier (a digit, an error code, a config key) and is mostly
	// small talk (Talk.Mostly), or has a function word in the rest (a pronoun, particle,
	// article, auxiliary, preposition, question word) or a word of social
	// talk (joke, bored, 无聊). Keyword queries ("NIST 800-88", "北京 住宿
	// 标准", "VPN", "CrashLoopBackOff") have none.
	Chat bool
}

// Analyze normalizes text and finds its cues. The model features are
// computed from Rest when a greeting was stripped and something remains.
func Analyze(text string) Analysis {
	an := Analysis{Norm: Normalize(text)}
	an.Rest, an.Greeting = StripGreeting(an.Norm)
	body := an.Rest
	if body == "" {
		body = an.Norm
	}
	an.Talk = findTalk(text, an.Norm, len(an.Norm)-len(body))
	an.Chat = an.Talk.Only || !an.Talk.Ident && (an.Talk.Mostly() || an.Talk.Conv || hasCue(body, socialCues))
	an.Toks = Tokenize(body)
	an.Counts = CountOf(an.Toks)
	add := func(ok bool, name string) {
		if ok {
			an.Cues = append(an.Cues, name)
		}
	}
	an.Compare = hasCue(body, cmpCues)
	an.Contrast = hasCue(body, contrastCues)
	biz := hasCue(body, bizCues)
	q := hasCue(body, qCues) || auxQuestion(an.Toks)
	you := hasCue(body, youCues)
	an.Substance = (biz || q || an.Compare) && !you && !an.Talk.Only
	for k := TalkGreeting; k < numTalkKinds; k++ {
		add(an.Talk.Has(k), talkCues[k])
	}
	add(an.Talk.Only, "talk-only")
	add(an.Greeting && an.Rest == "", "greet-only")
	add(an.Greeting && an.Rest != "", "greet+rest")
	add(an.Compare, "cmp")
	add(hasCue(body, whyCues), "why")
	add(hasCue(body, analyzeCues), "analyze")
	add(biz, "biz")
	add(q, "q")
	add(you, "you")
	add(hasCue(body, meCues), "me")
	// Multi-hop shapes that carry across data sets: a choice between two
	// named things, something shared, a relative clause, a chain of
	// possessives.
	add((containsCue(body, "or") && (q || an.Compare)) || strings.Contains(body, "还是"), "choice")
	add(hasCue(body, commonCues), "common")
	add(relativeClause(an.Toks), "relcl")
	add(strings.Count(body, "的") >= 2, "chain")
	an.Clauses = countCues(body, clauseCues)
	add(an.Clauses > 0, "clause")
	return an
}

// socialCues are words of social talk: humour, feelings, how the
// conversation goes. Enterprise keyword queries do not use them.
var socialCues = []string{
	"joke", "jokes", "funny", "fun", "hilarious", "boring", "bored", "love", "happy", "sad", "tired", "lonely",
	"angry", "cheerful", "chipper", "enthusiastic", "dumb", "stupid", "smart", "wrong", "correct", "welcome",
	"pleasure", "sleep", "wake", "bored",
	"笑话", "段子", "好玩", "有意思", "有趣", "无聊", "无趣", "累", "爱", "开心", "高兴", "难过", "伤心", "搞笑", "可爱",
	"睡觉", "起床", "对不起", "正确", "错误", "准确", "棒", "厉害", "漂亮", "帅", "美", "心情", "笑",
}

var talkCues = [numTalkKinds]string{"", "talk:greeting", "talk:thanks", "talk:farewell", "talk:capability", "talk:ack"}

var commonCues = []string{"in common", "share", "shared", "both", "same", "共同", "都是", "同一", "一样"}

var relWords = map[string]bool{"who": true, "which": true, "that": true, "where": true, "whose": true, "whom": true, "when": true}

// relativeClause reports a wh-word or "that" after the second word, as in
// "the film that starred ..." or "the college where X studied".
func relativeClause(toks []Token) bool {
	for i := 2; i < len(toks); i++ {
		if !toks[i].Han && relWords[toks[i].Text] {
			return true
		}
	}
	return false
}

var auxWords = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "does": true, "do": true, "did": true, "can": true,
	"will": true, "should": true, "could": true, "would": true, "has": true, "have": true, "am": true,
}

// auxQuestion reports a yes/no question: an English auxiliary first, or
// Chinese text ending in a question particle.
func auxQuestion(toks []Token) bool {
	if len(toks) == 0 {
		return false
	}
	if !toks[0].Han && auxWords[toks[0].Text] {
		return true
	}
	last := toks[len(toks)-1]
	return last.Han && (strings.HasSuffix(last.Text, "吗") || strings.HasSuffix(last.Text, "么"))
}
