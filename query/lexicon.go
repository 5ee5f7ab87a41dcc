package query

import (
	"sort"
	"unicode/utf8"
)

// The word lists of the package. They hold general language (units,
// numerals, time words, pronouns, question scaffolding, cue words that
// introduce an identifier) and nothing of any one knowledge base.

// isHanNumeral reports a character of Chinese numerals.
func isHanNumeral(r rune) bool {
	switch r {
	case '零', '〇', '一', '二', '两', '三', '四', '五', '六', '七', '八', '九', '十', '百', '千', '万', '亿', '半':
		return true
	}
	return false
}

// numberedPlaces follow 号 when it numbers a place, not a day (3号楼).
const numberedPlaces = "楼线门口房床桌座位码机库仓窗柜馆厅室车站"

type hanMultiplier struct {
	s string
	v float64
}

var hanMultipliers = []hanMultiplier{{"百万", 1e6}, {"千万", 1e7}, {"万", 1e4}, {"千", 1e3}, {"亿", 1e8}}

type hanUnit struct {
	s string
	u unit
	r []rune
}

// hanUnits are tried in order: longer units first.
var hanUnits = func() []hanUnit {
	d := func(n string) unit { return unit{kind: Duration, name: n} }
	a := func(n string) unit { return unit{kind: Amount, name: n} }
	m := func(n string) unit { return unit{kind: Number, name: n} }
	us := []hanUnit{
		{s: "个工作日", u: d("workday")}, {s: "工作日", u: d("workday")}, {s: "个自然日", u: d("day")}, {s: "自然日", u: d("day")},
		{s: "个小时", u: d("hour")}, {s: "小时", u: d("hour")}, {s: "钟头", u: d("hour")}, {s: "分钟", u: d("minute")}, {s: "秒钟", u: d("second")},
		{s: "个星期", u: d("week")}, {s: "星期", u: d("week")}, {s: "个礼拜", u: d("week")}, {s: "礼拜", u: d("week")}, {s: "周", u: d("week")},
		{s: "个月", u: d("month")}, {s: "个季度", u: d("quarter")}, {s: "季度", u: d("quarter")}, {s: "年", u: d("year")}, {s: "天", u: d("day")}, {s: "日", u: d("day")},
		{s: "元人民币", u: a("cny")}, {s: "人民币", u: a("cny")}, {s: "块钱", u: a("cny")}, {s: "元", u: a("cny")}, {s: "块", u: a("cny")},
		{s: "美元", u: a("usd")}, {s: "美金", u: a("usd")}, {s: "欧元", u: a("eur")}, {s: "英镑", u: a("gbp")}, {s: "日元", u: a("jpy")},
		{s: "港币", u: a("hkd")}, {s: "港元", u: a("hkd")},
		{s: "个百分点", u: unit{kind: Percent, name: "%"}},
		{s: "公斤", u: m("kg")}, {s: "千克", u: m("kg")}, {s: "斤", u: m("jin")}, {s: "克", u: m("g")}, {s: "吨", u: m("t")}, {s: "公里", u: m("km")},
		{s: "千米", u: m("km")}, {s: "厘米", u: m("cm")}, {s: "毫米", u: m("mm")}, {s: "米", u: m("m")}, {s: "英寸", u: m("inch")}, {s: "寸", u: m("inch")},
		{s: "人", u: m("人")}, {s: "次", u: m("次")}, {s: "件", u: m("件")}, {s: "笔", u: m("笔")}, {s: "单", u: m("单")}, {s: "张", u: m("张")}, {s: "台", u: m("台")},
		{s: "页", u: m("页")}, {s: "份", u: m("份")}, {s: "条", u: m("条")}, {s: "箱", u: m("箱")}, {s: "瓶", u: m("瓶")}, {s: "本", u: m("本")}, {s: "位", u: m("位")},
		{s: "名", u: m("名")}, {s: "间", u: m("间")}, {s: "套", u: m("套")}, {s: "个", u: m("个")}, {s: "G", u: m("gb")},
	}
	return us
}()

// latinUnits follow a number in English (and as abbreviations glued to it).
var latinUnits = func() map[string]unit {
	u := map[string]unit{}
	add := func(kind EntityKind, name string, glued bool, mult float64, words ...string) {
		for _, w := range words {
			u[w] = unit{kind: kind, name: name, glued: glued, mult: mult}
		}
	}
	add(Duration, "day", false, 0, "day", "days")
	add(Duration, "day", true, 0, "d")
	add(Duration, "hour", false, 0, "hour", "hours")
	add(Duration, "hour", true, 0, "h", "hr", "hrs")
	add(Duration, "minute", true, 0, "minute", "minutes", "min", "mins")
	add(Duration, "second", false, 0, "second", "seconds", "sec", "secs")
	add(Duration, "week", false, 0, "week", "weeks", "wk", "wks")
	add(Duration, "month", false, 0, "month", "months", "mo", "mos")
	add(Duration, "year", false, 0, "year", "years", "yr", "yrs")
	add(Duration, "quarter", false, 0, "quarter", "quarters")
	add(Amount, "usd", false, 0, "dollar", "dollars", "usd", "bucks")
	add(Amount, "cny", false, 0, "yuan", "rmb", "cny")
	add(Amount, "eur", false, 0, "euro", "euros", "eur")
	add(Amount, "gbp", false, 0, "gbp", "pound", "pounds", "quid")
	add(Amount, "jpy", false, 0, "yen", "jpy")
	add(Amount, "hkd", false, 0, "hkd")
	add(Percent, "%", false, 0, "percent", "pct")
	add(Number, "kg", true, 0, "kg", "kgs", "kilogram", "kilograms", "kilo", "kilos")
	add(Number, "lb", true, 0, "lb", "lbs")
	add(Number, "km", true, 0, "km", "kilometer", "kilometers", "kilometre", "kilometres")
	add(Number, "mi", false, 0, "mile", "miles")
	add(Number, "gb", true, 0, "gb", "gig", "gigs")
	add(Number, "mb", true, 0, "mb")
	add(Number, "tb", true, 0, "tb")
	add(Number, "", true, 1e3, "k")
	add(Number, "item", false, 0, "item", "items", "piece", "pieces", "pcs", "unit", "units")
	add(Number, "person", false, 0, "people", "persons", "person")
	add(Number, "time", false, 0, "times")
	return u
}()

var latinMultipliers = map[string]float64{"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}

var currencyCodes = map[string]string{"usd": "usd", "us": "usd", "rmb": "cny", "cny": "cny", "eur": "eur", "gbp": "gbp", "hkd": "hkd", "jpy": "jpy"}

// standardBodies publish numbered standards: ISO 27001, NIST 800-88.
var standardBodies = map[string]bool{
	"ISO": true, "IEC": true, "ISO/IEC": true, "NIST": true, "RFC": true, "GB": true, "GB/T": true, "IEEE": true,
	"SOC": true, "PCI": true, "ANSI": true, "FIPS": true, "ASTM": true, "BS": true, "DIN": true, "EN": true, "UL": true,
	"ETSI": true, "ITU": true, "JIS": true, "HL7": true, "IEC/ISO": true,
}

// qualifierWords may stand between a standard body and its number.
var qualifierWords = map[string]bool{"sp": true, "dss": true, "type": true, "part": true, "pub": true}

// codePrefixes make a hyphenated identifier a code rather than a product.
var codePrefixes = map[string]bool{"cve": true, "cwe": true, "err": true, "error": true, "kb": true, "ghsa": true, "rfc": true, "http": true}

// cueWord introduces an identifier of a kind.
type cueWord struct {
	s    string
	kind EntityKind
	r    []rune
}

// cueWords are checked in order, longer phrases first.
var cueWords = []cueWord{
	{s: "快递单号", kind: Order}, {s: "订单编号", kind: Order}, {s: "订单号", kind: Order}, {s: "运单号", kind: Order}, {s: "工单号", kind: Order}, {s: "合同编号", kind: Order},
	{s: "合同号", kind: Order}, {s: "发票号", kind: Order}, {s: "流水号", kind: Order}, {s: "单号", kind: Order}, {s: "订单", kind: Order},
	{s: "运单", kind: Order}, {s: "工单", kind: Order}, {s: "申请单", kind: Order}, {s: "快递", kind: Order},
	{s: "order number", kind: Order}, {s: "order no", kind: Order}, {s: "order id", kind: Order}, {s: "orders", kind: Order}, {s: "order", kind: Order},
	{s: "tracking number", kind: Order}, {s: "tracking no", kind: Order}, {s: "invoice number", kind: Order}, {s: "invoice no", kind: Order}, {s: "invoice", kind: Order},
	{s: "ticket number", kind: Order}, {s: "tickets", kind: Order}, {s: "ticket", kind: Order}, {s: "case number", kind: Order}, {s: "case", kind: Order},
	{s: "waybill", kind: Order}, {s: "po", kind: Order}, {s: "request", kind: Order}, {s: "booking", kind: Order}, {s: "reservation", kind: Order},
	{s: "错误代码", kind: Code}, {s: "错误码", kind: Code}, {s: "错误", kind: Code}, {s: "报错", kind: Code}, {s: "代码", kind: Code}, {s: "状态码", kind: Code}, {s: "返回码", kind: Code},
	{s: "error code", kind: Code}, {s: "exit code", kind: Code}, {s: "status code", kind: Code}, {s: "error", kind: Code}, {s: "code", kind: Code}, {s: "http", kind: Code},
	{s: "status", kind: Code}, {s: "errno", kind: Code},
	{s: "型号", kind: Product}, {s: "产品", kind: Product}, {s: "商品", kind: Product}, {s: "货号", kind: Product}, {s: "编号", kind: Product},
	{s: "model", kind: Product}, {s: "sku", kind: Product}, {s: "part number", kind: Product}, {s: "part", kind: Product}, {s: "item", kind: Product}, {s: "product", kind: Product},
}

func init() {
	for k := range cueWords {
		cueWords[k].r = []rune(cueWords[k].s)
	}
	for k := range hanUnits {
		hanUnits[k].r = []rune(hanUnits[k].s)
	}
}

// listJoiners join identifiers listed together.
var listJoiners = []string{"and", "or", ",", "、", "和", "与", "及", "或", "跟", "以及", "/", "&"}

var yearPrepositions = []string{"in", "since", "during", "before", "after", "until", "by", "of", "for", "from", "fy"}

var monthNames = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
	"september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

var ordinalSuffix = map[string]bool{"st": true, "nd": true, "rd": true, "th": true}

var numberWords = map[string]float64{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
	"ninety": 90, "hundred": 100, "a": 1, "an": 1, "half": 0.5,
}

// roleVerb marks what happened at a time.
type roleVerb struct {
	s    string
	role string
	r    []rune
}

var roleVerbs = []roleVerb{
	{s: "购买", role: RolePurchase}, {s: "购入", role: RolePurchase}, {s: "下单", role: RolePurchase}, {s: "订购", role: RolePurchase}, {s: "入手", role: RolePurchase},
	{s: "买", role: RolePurchase}, {s: "bought", role: RolePurchase}, {s: "buy", role: RolePurchase}, {s: "purchased", role: RolePurchase},
	{s: "purchase", role: RolePurchase}, {s: "ordered", role: RolePurchase},
	{s: "签收", role: RoleReceipt}, {s: "收到", role: RoleReceipt}, {s: "收货", role: RoleReceipt}, {s: "到货", role: RoleReceipt}, {s: "送达", role: RoleReceipt},
	{s: "received", role: RoleReceipt}, {s: "receive", role: RoleReceipt}, {s: "delivered", role: RoleReceipt}, {s: "arrived", role: RoleReceipt},
	{s: "发货", role: RoleShipment}, {s: "发出", role: RoleShipment}, {s: "寄出", role: RoleShipment}, {s: "出库", role: RoleShipment},
	{s: "shipped", role: RoleShipment}, {s: "dispatched", role: RoleShipment}, {s: "sent", role: RoleShipment}, {s: "mailed", role: RoleShipment},
}

// roleVerbIndex holds roleVerbs by first rune.
var roleVerbIndex = func() map[rune][]roleVerb {
	m := map[rune][]roleVerb{}
	for _, v := range roleVerbs {
		v.r = []rune(v.s)
		m[v.r[0]] = append(m[v.r[0]], v)
	}
	return m
}()

// byFirstRune indexes phrases by their first rune, longest first.
func byFirstRune(ps []string) map[rune][]phrase {
	m := map[rune][]phrase{}
	for _, p := range ps {
		r, _ := utf8.DecodeRuneInString(p)
		m[r] = append(m[r], phrase{p, []rune(p)})
	}
	for _, l := range m {
		sort.SliceStable(l, func(a, b int) bool { return len(l[a].r) > len(l[b].r) })
	}
	return m
}

// hanDates are Chinese relative time expressions.
var hanDates = byFirstRune(func() []string {
	ps := []string{
		"去年", "今年", "明年", "前年", "后年", "上个月", "这个月", "本月", "下个月", "上月", "下月", "当月", "次月",
		"上周", "这周", "本周", "下周", "上个星期", "这个星期", "下个星期", "上星期", "这星期", "下星期",
		"上个礼拜", "这个礼拜", "下个礼拜", "昨天", "今天", "明天", "前天", "后天", "大前天", "昨日", "今日", "明日", "当天", "次日",
		"上季度", "本季度", "这个季度", "下季度", "上个季度", "下个季度", "年初", "年底", "年末", "年中", "月初", "月底", "月末",
		"上半年", "下半年", "今早", "今晚", "昨晚", "明早", "本年度", "上年度", "去年底", "去年初", "今年初", "今年底",
		"元旦", "春节", "国庆", "中秋", "端午", "清明", "五一", "十一假期", "双十一",
	}
	for _, pre := range []string{"", "上", "下", "这", "本", "这个", "上个", "下个"} {
		for _, w := range []string{"周", "星期", "礼拜"} {
			if pre == "" && w == "周" {
				continue
			}
			for _, d := range []string{"一", "二", "三", "四", "五", "六", "日", "天", "末"} {
				if w != "周" && d == "末" {
					continue
				}
				ps = append(ps, pre+w+d)
			}
		}
	}
	ps = append(ps, "周一", "周二", "周三", "周四", "周五", "周六", "周日", "周末")
	return ps
}())

// latinDates are English time expressions, matched as whole words.
var latinDates = byFirstRune(func() []string {
	ps := []string{"yesterday", "today", "tomorrow", "tonight", "the day before yesterday", "the day after tomorrow",
		"this morning", "this afternoon", "this evening", "last night",
		"end of the month", "end of the year", "end of the quarter", "end of month", "end of year", "end of quarter",
		"beginning of the month", "beginning of the year", "start of the month", "start of the year",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	units := []string{"week", "month", "year", "quarter", "weekend", "fiscal year", "financial year", "semester",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
		"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	for _, pre := range []string{"last", "this", "next", "past", "previous", "coming", "the past", "the last", "the previous", "the next"} {
		for _, u := range units {
			ps = append(ps, pre+" "+u)
		}
	}
	return ps
}())

// relativeDateKey gives equivalent Chinese and English time words one key.
var relativeDateKey = map[string]string{
	"去年": "Y-1", "lastyear": "Y-1", "thepastyear": "Y-1", "今年": "Y0", "thisyear": "Y0", "明年": "Y+1", "nextyear": "Y+1",
	"前年": "Y-2", "上个月": "M-1", "上月": "M-1", "lastmonth": "M-1", "这个月": "M0", "本月": "M0", "当月": "M0",
	"thismonth": "M0", "下个月": "M+1", "下月": "M+1", "nextmonth": "M+1", "上周": "W-1", "上个星期": "W-1", "上星期": "W-1",
	"上个礼拜": "W-1", "lastweek": "W-1", "这周": "W0", "本周": "W0", "这个星期": "W0", "这星期": "W0", "thisweek": "W0",
	"下周": "W+1", "下个星期": "W+1", "下星期": "W+1", "nextweek": "W+1", "昨天": "D-1", "昨日": "D-1", "yesterday": "D-1",
	"今天": "D0", "今日": "D0", "today": "D0", "明天": "D+1", "明日": "D+1", "tomorrow": "D+1", "前天": "D-2",
	"后天": "D+2", "上季度": "Q-1", "上个季度": "Q-1", "lastquarter": "Q-1", "本季度": "Q0", "这个季度": "Q0",
	"thisquarter": "Q0", "下季度": "Q+1", "下个季度": "Q+1", "nextquarter": "Q+1", "周末": "WE", "weekend": "WE",
	"上半年": "H1", "下半年": "H2",
}
