package query

import "strings"

// General-language word lists for reading questions: pronouns, question
// scaffolding, function words, generic verbs and contrast sets. None of them
// names anything of a knowledge base.

// hanRef is a Chinese referring expression.
type hanRef struct {
	s      string
	plural bool
	person bool
	det    bool // a demonstrative that may precede a noun (这个, 该)
	poss   bool // possessive (它的, 其)
}

var hanRefs = byFirstRuneRef([]hanRef{
	{s: "它们的", plural: true, poss: true}, {s: "它们", plural: true}, {s: "他们的", plural: true, person: true, poss: true},
	{s: "他们", plural: true, person: true}, {s: "她们", plural: true, person: true},
	{s: "它的", poss: true}, {s: "它", det: false},
	{s: "他的", person: true, poss: true}, {s: "她的", person: true, poss: true}, {s: "他", person: true}, {s: "她", person: true},
	{s: "其", poss: true},
	{s: "该", det: true},
	{s: "这两个", plural: true, det: true}, {s: "这两款", plural: true, det: true}, {s: "这两台", plural: true, det: true},
	{s: "这两件", plural: true, det: true}, {s: "这几个", plural: true, det: true}, {s: "这几款", plural: true, det: true},
	{s: "这三个", plural: true, det: true}, {s: "这三款", plural: true, det: true}, {s: "两者", plural: true}, {s: "二者", plural: true},
	{s: "这些", plural: true, det: true}, {s: "那些", plural: true, det: true},
	{s: "上面那个", det: true}, {s: "前面那个", det: true}, {s: "刚才那个", det: true}, {s: "刚才说的", det: true},
	{s: "前面说的", det: true}, {s: "上面说的", det: true}, {s: "上面提到的", det: true}, {s: "刚才提到的", det: true}, {s: "上述", det: true},
	{s: "这一个", det: true}, {s: "这个", det: true}, {s: "那个", det: true}, {s: "这款", det: true}, {s: "那款", det: true},
	{s: "这台", det: true}, {s: "那台", det: true}, {s: "这件", det: true}, {s: "那件", det: true}, {s: "这笔", det: true},
	{s: "那笔", det: true}, {s: "这张", det: true}, {s: "那张", det: true}, {s: "这份", det: true}, {s: "那份", det: true},
	{s: "这单", det: true}, {s: "那单", det: true}, {s: "这条", det: true}, {s: "那条", det: true}, {s: "这部", det: true},
	{s: "那部", det: true}, {s: "这副", det: true}, {s: "那副", det: true}, {s: "这只", det: true}, {s: "那只", det: true},
	{s: "这项", det: true}, {s: "那项", det: true}, {s: "这批", det: true}, {s: "那批", det: true}, {s: "这家", det: true},
	{s: "那家", det: true}, {s: "这种", det: true}, {s: "那种", det: true}, {s: "此款", det: true}, {s: "此单", det: true},
	{s: "这", det: true},
})

func byFirstRuneRef(rs []hanRef) map[rune][]hanRef {
	m := map[rune][]hanRef{}
	for _, r := range rs {
		f := []rune(r.s)[0]
		m[f] = append(m[f], r)
	}
	for _, l := range m {
		for a := 1; a < len(l); a++ { // longest first, stable
			for b := a; b > 0 && len([]rune(l[b].s)) > len([]rune(l[b-1].s)); b-- {
				l[b], l[b-1] = l[b-1], l[b]
			}
		}
	}
	return m
}

// pronounFollowers follow a Chinese demonstrative used as a pronoun ("这个能
// 换吗", "这个的保修期"), as opposed to a determiner before a noun ("这个错误").
const pronounFollowers = "能可是要会还也都该算适属需有没不多怎为在和跟与的呢吗吧啊呀么,.?!;:、。"

// notRefAfter and notRefBefore exclude words that contain a referring
// character without referring (其他, 尤其, 应该, 这样, 这么, 这里).
var notRefAfter = map[string]string{
	"其": "他她它中实余次后间余",
	"该": "怎如不是去用找交选做走多咋怎",
	"这": "样么里边儿时次回些位",
	"他": "人",
	"它": "",
}

var notRefBefore = map[string]string{
	"其": "尤极与及何",
	"该": "应活",
	"他": "其",
	"她": "",
	"这": "",
}

// latinRefs are English referring words; the rules in refsLatin decide when
// they refer.
var latinRefs = map[string]struct{ plural, person bool }{
	"it": {}, "its": {}, "this": {}, "that": {}, "these": {plural: true}, "those": {plural: true},
	"they": {plural: true}, "them": {plural: true}, "their": {plural: true}, "both": {plural: true},
	"he": {person: true}, "him": {person: true}, "his": {person: true}, "she": {person: true}, "her": {person: true},
}

// dummyItAdjectives make "it" a dummy subject in "is it possible to ...".
var dummyItWords = map[string]bool{
	"possible": true, "ok": true, "okay": true, "necessary": true, "true": true, "required": true, "mandatory": true,
	"allowed": true, "permitted": true, "fine": true, "safe": true, "normal": true, "common": true, "better": true,
	"best": true, "worth": true, "easy": true, "hard": true, "difficult": true, "late": true, "early": true, "legal": true,
	"advisable": true, "wise": true, "appropriate": true, "acceptable": true, "recommended": true, "likely": true,
	"enough": true, "too": false, "take": true, "takes": true, "took": true, "taking": true, "seems": true, "seem": true,
	"appears": true, "depends": true, "matter": true, "matters": true, "raining": true, "mean": false,
}

// governors are words after which "this"/"that" is a pronoun or a
// determiner of the thing talked about, not a relative "that".
var governors = map[string]bool{
	"is": true, "was": true, "are": true, "were": true, "does": true, "do": true, "did": true, "will": true, "would": true,
	"can": true, "could": true, "should": true, "about": true, "for": true, "with": true, "on": true, "to": true, "in": true,
	"of": true, "from": true, "by": true, "cause": true, "causes": true, "caused": true, "means": true, "mean": true,
	"fix": true, "return": true, "exchange": true, "cover": true, "covers": true, "include": true, "includes": true,
	"apply": true, "applies": true, "use": true, "get": true, "buy": true, "repair": true, "replace": true, "cancel": true,
	"refund": true, "ship": true, "need": true, "needs": true, "handle": true, "resolve": true, "escalate": true,
	"what": true, "how": true, "and": true, "but": true, "or": true, "if": true, "when": true, "why": true, "where": true,
	"trigger": true, "triggers": true, "affect": true, "affects": true, "explain": true, "about,": true,
}

// auxWords start a clause: after a pronoun they make it a subject, and an
// elided phrase never contains them.
var auxWords = lexSet("aux", "en")

var whWords = lexSet("wh", "en")

var prepositions = map[string]bool{
	"for": true, "in": true, "on": true, "at": true, "with": true, "to": true, "during": true, "from": true, "under": true,
	"over": true, "via": true, "by": true, "of": true, "into": true, "within": true, "without": true, "after": true,
	"before": true, "between": true, "across": true, "through": true, "per": true, "about": true, "against": true,
}

var determiners = map[string]bool{
	"a": true, "an": true, "the": true, "my": true, "your": true, "our": true, "his": true, "her": true, "their": true,
	"its": true, "any": true, "some": true, "each": true, "every": true, "no": true, "another": true, "this": true,
	"that": true, "these": true, "those": true,
}

// stopWords carry no topic in an English question.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the i me my mine we us our you your he him his she her it its they them their
		this that these those is am are was were be been being do does did doing have has had having can could will would
		shall should may might must what which who whom whose when where why how if then than so and or but not no nor yes
		of to in on at for with by from about as into over under after before up down out off again still now also too
		just only any some all each every both either there here please tell know want like long much many more most very
		really s t ll re ve d one same usually generally typically normally ok okay hi hello hey thanks thank anymore yet
		way happen happens happened let lets let's i'm it's what's how's that's there's i'd i've i'll can't don't doesn't
		isn't aren't won't wouldn't shouldn't couldn't didn't possible able whether else ever per via within without
		right something anything everything someone anyone somebody anybody thing things case cases kind sort`) {
		m[w] = true
	}
	return m
}()

// latinVerbs are generic actions; a question whose only content words are
// verbs ("Can I still return it?") has no topic of its own.
var latinVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`return exchange refund cancel ship pay apply submit change use get take make do have go
		need want buy order send receive claim file request approve reset fix repair replace install update upgrade renew
		extend transfer book contact reach find see work start stop keep allow cover include require qualify count process
		handle open close sign log login access download upload print pick deliver track check arrive come help escalate
		support cost costs charge expire expires last lasts take takes mean means apply applies count counts work works
		happen swap switch move keep hold give put set bring add remove delete edit modify enable disable connect join leave
		print scan report call email tell say ask wait speed expedite rush lose lost break broke broken damage damaged
		still`) {
		m[w] = true
	}
	return m
}()

// latinVerb reports a verb form: a generic verb, or a word ending in -ed or
// -ing that is not a known noun form.
func latinVerb(w string) bool {
	if latinVerbs[w] {
		return true
	}
	if len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")) {
		return true
	}
	if len(w) > 3 && strings.HasSuffix(w, "s") && latinVerbs[w[:len(w)-1]] {
		return true
	}
	return false
}

// hanScaffold are question words, particles, pronouns, modals and function
// words removed when a Chinese question is reduced to its content.
var hanScaffold = byFirstRune(strings.Fields(`请问 请教 想问 问一下 问下 我想 想知道 知道 一下 麻烦 帮我 帮忙 可以 可不可以 能不能 能否 可否 是否
	是不是 有没有 会不会 要不要 需不需要 需要 应该 怎么办 怎么样 怎么 怎样 如何 什么时候 什么 啥时候 啥 多少钱 多少天 多少 多久 多长时间
	多长 几天 几个 几号 几 哪些 哪个 哪里 哪儿 哪家 哪份 哪条 哪种 哪款 哪 为什么 为啥 谁 吗 呢 吧 啊 呀 嘛 么 了 的 得 着 过
	我们 我 你们 你 您 咱们 现在 目前 还 也 都 就 又 再 才 那么 那 这 是 有 在 能 会 要 可 给 把 被 让 和 与 跟 或 或者 还是 以及 及
	一般 通常 大概 一共 总共 另外 此外 还有 然后 如果 假如 要是 的话 已经 只 仅 最 很 太 比较 不 没 没有 一个 个 些 呀 哦 嗯 对
	吧 所以 因为 但是 但 而且 并且 关于 对于 至于 等 之类 方面 一些 里 中 内 后 前 时 时候 下 上`))

// hanProtected are words that start with a scaffold character and must be
// kept whole (有效期 is not 有 + 效期).
var hanProtected = byFirstRune(strings.Fields(`目的地 目的 的确 有效期 有效 还款 会议 会员 会计 在职 要求 能力 能源 可用 可能性 给付 和解 下载 上传 上班 下班 上线
	下线 不良 不足 过期 过敏 了解 地址 地区 地点 得分 着装 以上 以下 以内 以外 上限 下限 上门 下单 上网 中心 中国 内容 内部 后台 前台
	时间 时效 时长 里程 没收 一次性 个人 个税 个体 才艺 最低 最高 最多 最少 最长 最短 最晚 最早 多次 还原 再次 再生 就业 就医 被子
	让利 把关 给予 要件 要素 有限 有关 是非 对方 对账 对公 对私 对象 对比 对接 谁家`))

// hanVerbs are generic Chinese actions: a question whose remaining content
// is only these ("现在能退吗") has no topic of its own.
var hanVerbs = byFirstRune(strings.Fields(`办理 处理 申请 提交 使用 安装 设置 登录 下载 联系 取消 修改 支付 付款 购买 更换 退回 寄回 审批 查询 补办
	升级 降级 打开 关闭 重置 恢复 解决 影响 适用 支持 包括 包含 加急 催 退还 赔 延期 续 转 退 换 修 买 卖 开 用 做 办 寄 发 收 拿 领
	交 填 签 批 查 看 找 问 算 加 减 补 延 到 来 去 走 好 完 成 出 进 请 剩 弄 搞 装 拆 试 等 放 选 定 约 订 取 送 带 拿到 收到
	到账 生效 通过 完成 需 用了 最多 最少 最长 最短 最晚 最早 最高 最低`))

// hanNouns are nouns that start with a verb character (发票 is not 发 +
// 票): a segment holding one has a topic.
var hanNouns = phrases(strings.Fields(`发票 收据 收入 收益 用户 用品 交通 买家 卖家 办公 开关`)...)

// hanPredicateMarkers end the subject of a Chinese question ("年假 | 可以折现吗").
// Verbs that also end a subject (保留, 生效: "服务器快照 | 保留多久") are data,
// lexicon class "predicate", each with golden follow-ups from several
// domains.
var hanPredicateMarkers = append(strings.Fields(`可不可以 能不能 有没有 是不是 要不要 什么时候 可以 能否 可否 是否 需要 应该 怎么 怎样 如何 什么 多少 多久
	多长 一般 通常 最多 最少 最长 包括 适用 算不算 要 能 是 有 会 几 哪 谁 由 找 归 在`), lexList("predicate", "zh")...)

// hanBoundary ends a Chinese noun phrase when scanning backwards.
const hanBoundary = "的是在和与及或了要能可会有把被给对向从为吗呢吧也都还就那这"

// hanOpeners start an elided Chinese question ("那 X 呢").
var hanOpeners = strings.Fields(`那如果是 那如果 那要是 那假如 那换成 如果是 如果只剩 如果 要是 假如 换成 改成 那么 那 还有 至于 那是`)

// hanQuestionWords make a clause a question.
var hanQuestionWords = phrases(strings.Fields(`什么 怎么 怎样 如何 多少 多久 多长 几 哪 谁 吗 是否 能否 可否 有没有 是不是 能不能 可不可以 为什么 为何 何时 啥 么 呢`)...)

// hanContinuation mark a question that continues the previous one.
var hanContinuation = phrases(strings.Fields(`现在 目前 还能 还可以 还要 还需要 还没 还在 还会 还得 还可 还有没有 也能 也可以 也要 也需要 也是 仍然 依然 还是不`)...)

var latinContinuation = map[string]bool{"still": true, "now": true, "anymore": true, "yet": true, "too": true, "again": true}

// latinOpeners start an elided English question ("what about X").
var latinOpeners = []string{
	"is the same true for", "is the same true of", "does the same apply to", "does the same go for", "does the same hold for",
	"same applies to", "and what about", "and how about", "what about", "how about", "what if it's", "what if it is", "what if", "same question for",
	"same question about", "same goes for", "same for", "same with", "what of", "and also", "and", "also", "then", "but",
	"or",
}

// contrastSets hold words that replace one another in an elided question
// ("国内快递几天送达" + "国际的呢", "for employees" + "what about interns").
var contrastSets = [][]string{
	strings.Fields("国内 国际 海外 境内 国外 出国 本地 异地 外地 省内 省外 市内 市外"),
	strings.Fields("线上 线下 网上 门店 实体店 官网 app"),
	strings.Fields("工作日 周末 节假日 法定节假日"),
	strings.Fields("个人 企业 公司 单位 商户"),
	strings.Fields("电子 纸质"),
	strings.Fields("白天 夜间 晚上 凌晨"),
	strings.Fields("首次 第二次 再次"),
	strings.Fields("北京 上海 广州 深圳 杭州 成都 南京 武汉 西安 重庆 天津 苏州 香港 澳门 台湾 一线城市 二线城市 三线城市"),
	strings.Fields("ios 安卓 android windows mac macos linux 苹果 iphone ipad chromebook"),
	strings.Fields("domestic international overseas local abroad"),
	strings.Fields("online offline in-store"),
	strings.Fields("weekday weekend holiday"),
	strings.Fields("individual business corporate enterprise"),
	strings.Fields("standard express overnight priority"),
}

// contrastIndex maps a word to its set.
var contrastIndex = func() map[string]int {
	m := map[string]int{}
	for k, set := range contrastSets {
		for _, w := range set {
			m[w] = k
		}
	}
	return m
}()

// singular strips an English plural ending for comparison.
func singular(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}
