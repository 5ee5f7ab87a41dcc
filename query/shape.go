package query

import "strings"

// Aggregation operations of a Shape.
const (
	OpSum     = "sum"
	OpCount   = "count"
	OpListAll = "list_all"
)

// Shape flags a question that top-k retrieval cannot answer honestly: an
// aggregate over records (a total, a count, a complete list), which needs an
// authorised structured query and a deterministic computation, and a request
// to cover everything ("summarize all supplier complaints"), which needs a
// declared scope and a sampling or coverage strategy. Ten passages summed or
// summarised are a sample, not the answer.
type Shape struct {
	Aggregate bool   // an aggregate over records
	Op        string // OpSum, OpCount or OpListAll when Aggregate
	Coverage  bool   // asks to summarise or analyse all of something
	Cue       string // the words that decided, for the log
}

// durationAfter reports a unit of time right after a count cue: "年假一共有
// 多少天" asks how long, not how many records.
func durationAfter(rest string) bool {
	for _, u := range []string{"天", "小时", "个小时", "个月", "月", "年", "周", "个星期", "星期", "分钟", "个工作日", "工作日"} {
		if strings.HasPrefix(rest, u) {
			return true
		}
	}
	return false
}

// latinDurationAfter reports a unit of time (or leave) as the word after a
// count cue: "how many days of leave … in total" asks how long, not how
// many records.
func latinDurationAfter(rest string) bool {
	w, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	return timeUnits[w] || w == "working" || w == "business" || w == "calendar" || w == "leave"
}

// ShapeOf reads the shape of a question from its wording: totals (总额, 合计,
// in total, sum of), counts of records over a period or a whole set (这个月
// 退了多少单, how many orders did we ship last month; not "how many days
// can I take", which asks for a rule), complete lists (列出所有, list all) and
// coverage (总结所有…的主要原因, summarize all …). A question about a rule
// that mentions a number is not an aggregate.
func ShapeOf(text string) Shape {
	t := newText(text)
	toks := t.tokens()
	c := compactKey(text)
	lw := " " + lowerWords(toks) + " "
	var s Shape
	hit := func(op, cue string) {
		if s.Op == "" {
			s.Aggregate, s.Op, s.Cue = true, op, cue
		}
	}
	// Counts first: "total number of" is a count, not a sum.
	for _, cue := range []string{" total number of ", " number of ", " count of ", " how many ", " how often "} {
		if !strings.Contains(lw, cue) {
			continue
		}
		scope := containsAnyWord(lw, countScopes) || hasKind(t, Date) || cue == " total number of " || cue == " count of "
		if scope && !containsAnyWord(lw, ruleWords) && !latinDurationAfter(lw[strings.Index(lw, cue)+len(cue):]) {
			hit(OpCount, strings.TrimSpace(cue))
		}
		break
	}
	for _, cue := range hanCounts {
		if strings.Contains(c, cue) {
			if (containsAny(c, hanAggScopes) || hasKind(t, Date)) && !containsAny(c, hanRuleWords) {
				hit(OpCount, cue)
			}
			break
		}
	}
	for _, cue := range hanCountStrong {
		if at := strings.Index(c, cue); at >= 0 && !durationAfter(c[at+len(cue):]) {
			hit(OpCount, cue)
		}
	}
	for _, cue := range hanSums {
		if strings.Contains(c, cue) {
			hit(OpSum, cue)
		}
	}
	// "How many days of leave do I get in total?" asks how long, not for a
	// sum over records: "in total" and "altogether" then say nothing.
	howLong := false
	if at := strings.Index(lw, " how many "); at >= 0 && !hasKind(t, Date) {
		howLong = latinDurationAfter(lw[at+len(" how many "):])
	}
	// Without a Latin word lw is two spaces, where no cue can occur: the
	// Latin cues are then not looked for (nor padded).
	latin := len(lw) > 2
	for _, cue := range latinSums {
		if !latin || howLong && (cue == "in total" || cue == "altogether") {
			continue
		}
		if strings.Contains(lw, " "+cue+" ") {
			hit(OpSum, cue)
		}
	}
	// A verb joined to a quantifier the question lacks cannot be in it: the
	// quantifiers are looked for once, not once per verb.
	var quants [5]string
	nq := 0
	for _, q := range []string{"所有", "全部", "每一", "每个", "全体"} {
		if strings.Contains(c, q) {
			quants[nq], nq = q, nq+1
		}
	}
	for _, v := range hanListVerbs {
		for _, q := range quants[:nq] {
			if strings.Contains(c, v+q) {
				hit(OpListAll, v+q)
			}
		}
	}
	if strings.Contains(c, "所有") || strings.Contains(c, "全部") {
		for _, n := range []string{"清单", "列表", "名单", "明细", "记录"} {
			if strings.Contains(c, n) {
				hit(OpListAll, n)
			}
		}
	}
	for _, cue := range latinListAll {
		if latin && strings.Contains(lw, " "+cue+" ") {
			hit(OpListAll, cue)
		}
	}
	// Coverage: summarise, analyse or find the main reasons over all of a set.
	allZh := containsAny(c, []string{"所有", "全部", "每个", "各个", "历年", "全年", "一直以来", "全体", "各类", "各部门", "各供应商"})
	for _, v := range hanCoverage {
		if strings.Contains(c, v) && allZh {
			s.Coverage = true
			if s.Cue == "" {
				s.Cue = v
			}
			break
		}
	}
	allEn := latin && containsAnyWord(lw, []string{"all", "every", "across", "each", "entire", "whole"})
	for _, v := range latinCoverage {
		if allEn && strings.Contains(lw, " "+v+" ") {
			s.Coverage = true
			if s.Cue == "" {
				s.Cue = v
			}
			break
		}
	}
	return s
}

func lowerWords(toks []token) string {
	var b strings.Builder
	for _, tk := range toks {
		if tk.kind == tokWord {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(tk.low)
		}
	}
	return b.String()
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// containsAnyWord reports whether the padded word string lw has any of the
// phrases as whole words.
func containsAnyWord(lw string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(lw, " "+p+" ") {
			return true
		}
	}
	return false
}

var (
	hanSums = strings.Fields(`总额 总金额 总计 合计 总和 加起来 一共多少钱 总共多少钱 一共花了 总共花了 累计多少 累计金额 累计退款 累计消费
		累计支出 总支出 总花费 总费用 总成本 总收入 总销售 总营收 总开销 总退款`)
	latinSums = []string{"total amount", "total of", "in total", "sum of", "the total", "total refund", "total refunds",
		"total spend", "total spent", "total spending", "total cost", "total costs", "total revenue", "total sales",
		"altogether", "combined total", "cumulative", "add up", "adds up", "summed", "grand total"}
	hanCounts = strings.Fields(`多少笔 几笔 多少单 几单 多少条 几条 多少次 几次 多少起 几起 多少件 几件 多少张 几张 多少个订单 几个订单 多少个工单
		几个工单 多少个客户 几个客户 多少人 几个人 多少位 几位 多少名 几名 多少家 几家 多少台 几台`)
	hanCountStrong = strings.Fields(`总数 总人数 总单数 总笔数 一共有多少 总共有多少 共有多少 数量是多少 有多少个 统计一下 统计数量`)
	hanAggScopes   = strings.Fields(`已 了 过 共 总共 一共 所有 全部 累计 截至 截止 目前为止 到目前 本月 这个月 上个月 今年 去年 本季度 上季度 上周 本周 这周 最近 至今`)
	hanRuleWords   = strings.Fields(`能 可以 可 允许 最多 最少 上限 下限 限 需要 要求 应该 必须 每年 每月 每次 每人`)
	countScopes    = []string{"did", "were", "was", "have been", "has been", "got", "received", "placed", "filed", "opened",
		"closed", "submitted", "returned", "shipped", "sold", "so far", "in total", "total", "altogether", "to date",
		"this month", "last month", "this year", "last year", "this week", "last week", "this quarter", "last quarter", "all"}
	ruleWords = []string{"can", "may", "allowed", "should", "maximum", "max", "minimum", "limit", "up to", "per", "do i get",
		"am i", "entitled", "must", "need", "required"}
	hanListVerbs = strings.Fields(`列出 列举 罗列 导出 给出 显示 查出 找出 拉出 汇总出`)
	latinListAll = []string{"list all", "list every", "list of all", "show all", "show me all", "show every", "full list",
		"complete list", "export all", "all records", "every record", "all orders", "all tickets", "all invoices"}
	hanCoverage   = strings.Fields(`总结 归纳 概括 梳理 汇总 盘点 分析 主要原因 常见原因 共性 主要问题 趋势 分布`)
	latinCoverage = []string{"summarize", "summarise", "summary of", "overview of", "recap", "common themes", "main reasons",
		"top reasons", "most common", "trends", "patterns", "breakdown", "analyze", "analyse", "themes"}
)
