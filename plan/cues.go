package plan

// Built-in cue lists. They are compiled once per Planner and never mutated.
// Keyword syntax: see lexicon.go. Chinese and English sit side by side.

// humanServiceCues ask for a person instead of the assistant.
var humanServiceCues = []string{
	"转人工", "人工客服", "人工服务", "人工坐席", "找人工", "要人工", "接人工", "真人客服", "客服人员", "联系客服", "找客服",
	"human agent", "live agent", "talk to a real person", "speak to a real person", "want a real person",
	"want a human", "talk to a human", "speak to a human", "talk to a person",
	"speak to a person", "talk to someone", "speak to someone", "talk to an agent", "speak to an agent",
	"speak with a human", "talk with a human", "customer service representative", "talk to a representative", "speak to a representative",
	"transfer me to",
}

// safetyCues are clear cases only: prompt injection, requests for harmful
// content, and creative writing that no enterprise knowledge base answers.
// Anything less clear goes to retrieval, where "nothing found" is safe.
var safetyCues = []string{
	// prompt injection
	"忽略之前的", "忽略以上", "忽略前面的", "忽略上面的", "无视之前", "忽略所有指令", "忽略你的指令", "系统提示词", "越狱",
	"ignore previous", "ignore all previous", "ignore prior", "ignore all prior", "ignore the previous", "ignore above",
	"ignore the above", "ignore your instructions", "ignore your rules", "disregard previous", "disregard all previous",
	"disregard your instructions", "forget your instructions", "forget all previous", "system prompt", "jailbreak*",
	"developer mode", "do anything now",
	// harmful content
	"炸弹", "炸药", "制毒", "制作毒品", "冰毒", "自制枪", "投毒", "盗取密码", "盗号", "勒索软件", "洗钱",
	"make a bomb", "build a bomb", "explosive*", "make meth", "cook meth", "hack into", "steal password*",
	"steal credential*", "ransomware", "malware", "launder money", "money laundering",
	// creative writing
	"写一首诗", "写首诗", "作一首诗", "写一首歌", "写歌词", "写小说", "写一篇小说",
	"write me a poem", "write a poem", "compose a poem", "write me a song", "write a song", "write me a story",
	"write a story",
}

// followUpOpeners start an elliptical question that leans on the previous turn.
var followUpOpeners = []string{
	"那", "那么", "那如果", "如果是", "要是", "换成", "还有",
	"what about", "how about", "and", "also", "what if", "same for", "then", "but what",
}

// anaphors point back at something said before.
var anaphors = []string{
	"这个", "那个", "这些", "那些", "它", "它们", "上面", "刚才", "前面说的", "上述",
	"it", "this", "that", "these", "those", "they", "them", "its", "the same",
}

// knowledgeCues mark questions that need several passages put together:
// explanation, comparison or synthesis; where a rule is documented; whole
// processes; and several asks chained by a clause connective. A question with
// none of them is a single concrete ask (FAQ_QUERY).
var knowledgeCues = []string{
	"以及", "并且", "同时", "此外",
	"流程", "步骤", "为什么", "原因", "区别", "差异", "对比", "比较", "解释", "介绍", "总结", "归纳", "概述", "梳理", "分析",
	"在哪里查看", "在哪查看", "在哪里查", "在哪查", "哪里可以查", "哪里能查", "在哪里看", "在哪看", "在哪里找", "规章制度",
	"as well as", "and also", "process*", "procedure*", "workflow*", "steps", "why", "explain*", "compare", "comparison",
	"difference*", "overview", "summar*", "where can i find", "where do i find", "where to find", "where can i see",
	"how does",
}

// Category cues. A question can match several categories; see
// categoryPrecedence for which one the plan carries.
var categoryCues = map[string][]string{
	CategoryPricing: {
		"费用", "金额", "报销", "付款", "价格", "预算", "发票", "收费", "价钱", "多少钱", "退款", "支付", "报价", "单价",
		"费率", "扣款", "打款", "薪资", "工资", "补贴",
		"cost*", "price*", "pricing", "fee", "fees", "reimburs*", "payment*", "pay", "paid", "amount*", "invoice*",
		"budget*", "expense*", "refund*", "salary", "salaries", "allowance*",
	},
	CategoryCompliance: {
		"合规", "隐私", "合同", "审计", "保密", "个人信息", "数据安全", "违规", "监管", "法规",
		"gdpr", "complian*", "privacy", "contract*", "audit*", "confidential*", "nda", "regulat*",
	},
	CategoryTroubleshooting: {
		"报错", "失败", "异常", "排查", "连不上", "故障", "错误", "无法", "打不开", "登不上", "登录不了", "崩溃", "卡住", "没反应", "超时",
		"error*", "fail*", "cannot connect", "can't connect", "troubleshoot*", "not working", "doesn't work",
		"crash*", "broken", "timeout", "timed out", "unable to",
	},
	CategorySummary: {
		"总结", "归纳", "对比", "大纲", "汇总", "概述", "概括", "比较", "区别", "差异", "梳理",
		"summar*", "compare", "comparison", "overview", "outline", "recap", "difference*",
	},
}

// categoryPrecedence decides between matching categories: the one whose
// wrong answer costs most (and whose FAQ guard is strictest) wins, so a
// question about a contract's payment terms is guarded as compliance.
var categoryPrecedence = []string{CategoryCompliance, CategoryPricing, CategoryTroubleshooting, CategorySummary}

// tableCues name a structure by themselves: a list, ledger, field, row.
var tableCues = []string{
	"清单", "台账", "字段", "明细", "表格", "列表", "一览表", "报表", "对照表", "表里", "表中", "表内",
	"每一行", "每行", "哪一行", "哪行", "第几行", "行记录", "哪一列", "哪列", "列名",
	"list of", "ledger*", "field*", "column*", "row", "rows", "line item*", "table*", "spreadsheet*", "per row",
	"sheet*", "checklist*",
}

// tableItemCues are items that usually live in a row (an amount, an owner, a
// payment milestone). One alone is an ordinary question ("报销金额上限是多少");
// two together describe a row.
var tableItemCues = []string{
	"金额", "责任人", "负责人", "付款节点", "单价", "数量", "编号", "截止日期",
	"amount*", "owner*", "payment milestone*", "unit price*", "quantity", "quantities", "due date*",
}
