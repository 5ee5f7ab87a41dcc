package main

// Keyword queries: what an agent's tool call or a search box sends instead of
// a sentence ("expense limit travel", "错误代码 0x80070057", "PRJ-118
// status", a bare noun). The public pools have none, and their short texts
// are almost all chitchat, so a model fitted on them alone answers a
// two-word query without retrieval. The examples here are generated from
// vocabulary lists, codes made up at random, and the content words of the
// pool's own questions; all are labelled factual (a look-up).

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

var kwEnNouns = []string{
	"printer", "monitor", "docking station", "keyboard", "headset", "webcam", "firewall", "proxy", "certificate",
	"dns", "dhcp", "ldap", "active directory", "service desk", "hotspot", "bluetooth", "antivirus",
	"disk encryption", "backup", "mailbox", "calendar", "distribution list", "license key", "software catalog",
	"admin rights", "remote desktop", "citrix", "vdi", "ssh key", "api token", "rate limit", "webhook", "cron job",
	"load balancer", "database replica", "storage bucket", "container registry", "helm chart", "node pool",
	"service account", "meal allowance", "relocation package", "bonus payout", "stock options", "health insurance",
	"dental plan", "pension contribution", "sick days", "bereavement leave", "jury duty", "commuter benefit",
	"gym membership", "tuition reimbursement", "referral bonus", "performance review", "promotion cycle",
	"salary band", "overtime rate", "holiday calendar", "office hours", "dress code", "parking permit",
	"corporate card", "cost center", "budget approval", "purchase order", "vendor onboarding", "invoice matching",
	"tax form", "expense category", "receipt upload", "conference room", "visitor badge", "locker", "shuttle",
	"canteen menu", "fire drill", "first aid", "data retention", "privacy notice", "export control",
	"code of conduct", "whistleblower hotline", "security training", "phishing report", "password manager",
	"sso", "2fa", "vpn client", "wifi", "laptop", "refund", "warranty", "shipping", "return label", "exchange",
	"onboarding", "offboarding", "payroll", "timesheet approval", "expense report", "travel booking", "hotel",
	"flight class", "visa", "insurance claim",
}

var kwEnMods = []string{
	"policy", "limit", "deadline", "form", "process", "status", "contact", "template", "rules", "eligibility",
	"request", "approval", "cost", "schedule", "location", "setup", "error", "not working", "reset", "renewal",
	"owner", "portal", "checklist", "faq", "escalation", "sla", "exceptions", "fee", "download", "install",
}

var kwPlaces = []string{"london", "berlin", "singapore", "new york", "paris", "tokyo", "remote", "hq", "emea", "apac"}

var kwZhNouns = []string{
	"工资条", "个税", "专项附加扣除", "补充医疗", "商业保险", "餐卡", "停车位", "工位", "宿舍", "会议纪要", "用印", "档案",
	"户口", "居住证", "签证", "护照", "培训", "学分", "晋升", "职级", "绩效", "述职", "年会", "福利", "节日礼品", "通讯录",
	"复印", "扫描仪", "投影仪", "视频会议", "域账号", "堡垒机", "服务器", "数据库", "防火墙", "白名单", "端口", "域名",
	"证书", "镜像", "容器", "流水线", "代码仓库", "发布", "回滚", "告警", "监控", "日志", "工单", "报价单", "对账",
	"付款", "预付款", "发票认证", "进项税", "销项税", "报关", "质检", "库存", "仓库", "供应商", "客户", "合同模板",
	"法务审核", "保密协议", "竞业协议", "差旅报销", "招待费", "年假", "病假", "调休", "退货", "换货", "退款",
	"电子发票", "会议室", "VPN", "邮箱", "采购", "加班", "出差", "入职", "离职", "考勤", "密码", "订单", "快递",
	"保修", "门禁卡", "笔记本电脑", "打印机", "软件安装", "外网权限",
}

var kwZhMods = []string{
	"标准", "流程", "时间", "地址", "电话", "入口", "模板", "申请", "规定", "额度", "上限", "截止", "审批", "材料",
	"费用", "报错", "失败", "异常", "权限", "开通", "重置", "查询", "下载", "联系人", "进度", "要求", "有效期", "规则",
}

var kwZhPlaces = []string{"广州", "成都", "杭州", "武汉", "南京", "西安", "苏州", "天津", "重庆", "香港", "新加坡", "海外", "总部", "分公司"}

var kwCodePrefixes = []string{"PRJ", "HR", "IT", "FIN", "REQ", "CHG", "TKT", "SR", "PO", "SO", "INV", "RMA", "CASE", "BUG"}

var kwStandards = []string{"ISO", "IEC", "EN", "ANSI", "ASTM", "ITU-T", "NFPA", "IPC", "JIS", "DIN"}

var kwCliErrors = []string{
	"command not found", "connection timed out", "access is denied", "unable to resolve host",
	"certificate has expired", "disk quota exceeded", "too many open files", "broken pipe", "out of memory",
	"deadlock detected", "read-only file system", "host key verification failed", "no route to host",
	"module not found", "segmentation fault", "invalid credentials", "token expired", "bad request",
}

var kwCamelParts = []string{"Node", "Disk", "Pressure", "Memory", "Volume", "Mount", "Failed", "Pending", "Evicted",
	"Timeout", "Config", "Secret", "Invalid", "Quota", "Exceeded", "Unavailable", "Sync", "Error", "Schedule", "Probe"}

var kwSnakeParts = []string{"max", "min", "timeout", "pool", "size", "retry", "count", "buffer", "cache", "ttl",
	"log", "level", "worker", "threads", "heap", "idle", "keepalive", "batch", "queue", "limit"}

// keywordExamples generates n English and n Chinese keyword queries.
func keywordExamples(rng *rand.Rand, n int) []example {
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	code := func() string {
		switch rng.IntN(9) {
		case 0:
			return fmt.Sprintf("0x%08X", rng.Uint32())
		case 1:
			return fmt.Sprintf("error %d", 100+rng.IntN(99900))
		case 2:
			return fmt.Sprintf("%s-%d", pick(kwCodePrefixes), 1+rng.IntN(9999))
		case 3:
			return fmt.Sprintf("%c%d", 'A'+rune(rng.IntN(26)), 1+rng.IntN(999))
		case 4:
			return fmt.Sprintf("%s %d", pick(kwStandards), 100+rng.IntN(60000))
		case 5:
			return fmt.Sprintf("v%d.%d.%d", rng.IntN(10), rng.IntN(30), rng.IntN(50))
		case 6:
			return pick(kwSnakeParts) + "_" + pick(kwSnakeParts)
		case 7:
			return strings.ToUpper(pick(kwSnakeParts) + "_" + pick(kwSnakeParts))
		}
		return pick(kwCamelParts) + pick(kwCamelParts) + pick(kwCamelParts)
	}
	var out []example
	add := func(s string) { out = append(out, example{s, "factual"}) }
	for range n {
		switch rng.IntN(8) {
		case 0:
			add(pick(kwEnNouns))
		case 1:
			add(pick(kwEnNouns) + " " + pick(kwEnMods))
		case 2:
			add(pick(kwPlaces) + " " + pick(kwEnNouns) + " " + pick(kwEnMods))
		case 3:
			add(code())
		case 4:
			add(code() + " " + pick(kwEnNouns))
		case 5:
			add(pick(kwEnNouns) + " " + pick(kwCliErrors))
		case 6:
			add(pick(kwEnNouns) + " " + code())
		default:
			add(pick(kwEnMods) + " " + pick(kwEnNouns) + " " + pick(kwEnNouns))
		}
	}
	for range n {
		switch rng.IntN(8) {
		case 0:
			add(pick(kwZhNouns))
		case 1:
			add(pick(kwZhNouns) + " " + pick(kwZhMods))
		case 2:
			add(pick(kwZhPlaces) + " " + pick(kwZhNouns) + " " + pick(kwZhMods))
		case 3:
			add(pick(kwZhNouns) + pick(kwZhMods))
		case 4:
			add(code() + " " + pick(kwZhNouns))
		case 5:
			add(pick(kwZhNouns) + " " + code())
		case 6:
			add(pick(kwZhNouns) + " " + pick(kwZhMods) + " " + fmt.Sprint(rng.IntN(20000)))
		default:
			add(pick(kwZhNouns) + " " + pick(kwZhNouns) + " " + pick(kwZhMods))
		}
	}
	// Wrapped in small talk, or elliptical follow-ups: still a look-up.
	for i := range n / 4 {
		k := out[rng.IntN(len(out))].text
		switch i % 6 {
		case 0:
			k = pick([]string{"hi ", "hello, ", "hey ", "你好，", "您好 "}) + k
		case 1:
			k += pick([]string{" thanks", " thx", " 谢谢", "，谢谢", " pls"})
		case 2:
			k = "那" + pick(kwZhNouns) + "呢"
		case 3:
			k = pick(kwZhPlaces) + "的呢"
		case 4:
			k = pick([]string{"what about ", "and for ", "how about "}) + pick(kwEnNouns)
		default:
			k = pick(kwEnNouns) + " too?"
		}
		add(k)
	}
	return out
}

// poolKeywords turns questions into keyword queries: one to four adjacent
// content words of an English question, or one to three content fragments
// of a Chinese one.
func poolKeywords(rng *rand.Rand, questions []string, n int) []example {
	var out []example
	for _, i := range rng.Perm(len(questions)) {
		if len(out) == n {
			break
		}
		q := feat.Normalize(questions[i])
		var parts []string
		if hanShare(q) {
			parts = hanFragments(q)
		} else {
			for _, w := range strings.Fields(q) {
				if !stopWord(w) {
					parts = append(parts, w)
				}
			}
		}
		if len(parts) == 0 {
			continue
		}
		k := 1 + rng.IntN(min(4, len(parts)))
		if hanShare(q) {
			k = 1 + rng.IntN(min(3, len(parts)))
		}
		start := rng.IntN(len(parts) - k + 1)
		out = append(out, example{strings.Join(parts[start:start+k], " "), "factual"})
	}
	return out
}

// stopWord reports the function words and question words that a keyword
// query drops.
func stopWord(w string) bool {
	an := feat.FindTalk(w)
	return an.Conv || an.Kinds != 0 || len(w) < 2
}

// hanFragments splits Chinese text at function characters and question
// words, keeping fragments of two to eight characters.
func hanFragments(q string) []string {
	var out []string
	cut := func(r rune) bool {
		return r == ' ' || strings.ContainsRune("的了是在有吗呢吧啊什么哪谁几多少怎样为何和与及或被把将从对于这那个", r)
	}
	for _, f := range strings.FieldsFunc(q, cut) {
		if n := len([]rune(f)); n >= 2 && n <= 8 {
			out = append(out, f)
		}
	}
	return out
}
