package main

// The project's own training examples, written for this router. Public
// pools have no Chinese analytical questions and no enterprise help-desk
// questions at all, so they are generated here from hand-written
// templates and topic lists. Templates mix phrasings on purpose; the
// router must learn what a question asks, not one sentence shape.

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var zhTopics = []string{
	"差旅报销", "招待报销", "年假", "病假", "事假", "调休", "婚假", "产假", "退货", "换货", "退款", "电子发票",
	"增值税专用发票", "会议室预订", "VPN账号", "邮箱密码重置", "合同盖章", "采购申请", "加班申请", "工资条",
	"公积金提取", "门禁卡补办", "笔记本电脑申领", "出差住宿", "离职手续", "入职体检", "在职证明", "社保缴纳证明",
	"备用金借款", "快递寄件", "访客登记", "打印机报修", "软件安装申请", "外网访问权限", "培训报名",
}

var zhPairs = [][2]string{
	{"差旅报销", "招待报销"}, {"年假", "调休"}, {"病假", "事假"}, {"退货", "换货"}, {"电子发票", "纸质发票"},
	{"固定期限合同", "无固定期限合同"}, {"正式员工", "外包员工"}, {"远程办公", "现场办公"}, {"国内出差", "海外出差"},
	{"VPN", "零信任网关"}, {"采购申请", "付款申请"}, {"试用期考核", "年度绩效考核"}, {"社保", "商业保险"},
	{"线上退款", "线下退款"}, {"企业邮箱", "即时通讯工具"}, {"加班费", "调休补偿"}, {"产假", "陪产假"},
	{"七天无理由退货", "质量问题退货"}, {"普通快递", "加急快递"}, {"备用金", "个人垫付"}, {"集团采购", "部门自行采购"},
	{"A类供应商", "B类供应商"}, {"新版报销制度", "旧版报销制度"}, {"北京办公室", "上海办公室"},
}

var zhAspects = []string{"流程", "审批环节", "报销标准", "适用范围", "所需材料", "办理时效", "费用承担方式", "注意事项", "风险", "规定"}

var zhCompare = []string{
	"对比一下%[1]s和%[2]s的%[3]s差异",
	"%[1]s和%[2]s在%[3]s上有什么区别",
	"比较%[1]s与%[2]s的%[3]s，各有什么优缺点",
	"把%[1]s和%[2]s的%[3]s整理成一张对比表",
	"%[1]s跟%[2]s的%[3]s有哪些不同，为什么这样设计",
	"请分析%[1]s和%[2]s在%[3]s方面的异同",
	"从%[3]s的角度看，%[1]s和%[2]s哪个更合适",
	"%[1]s相比%[2]s，%[3]s上有哪些优势和不足",
	"帮我梳理%[1]s和%[2]s在%[3]s上的主要差别",
	"%[1]s和%[2]s的%[3]s为什么不一样",
}

var zhSingleAnalytical = []string{
	"为什么%s的审批要经过这么多环节",
	"分析一下%s流程里最容易出问题的地方",
	"总结一下公司关于%s的所有规定",
	"%s的流程是怎么设计的，每一步起什么作用",
	"如果%s被驳回了，后续有哪些处理方式，各自有什么影响",
	"梳理一下%s从申请到完成的完整流程",
	"综合来看，%s政策调整对员工有什么影响",
	"评估一下我们现在的%s制度有哪些可以改进的地方",
	"%s和财务、人事的相关规定之间是什么关系",
	"归纳一下大家在%s上最常遇到的问题和解决办法",
	"%s的规则这两年是怎么演变的，原因是什么",
	"全面介绍一下%s涉及的部门、系统和审批节点",
}

var zhGeneralAnalytical = []string{
	"对比一下中国和美国的个人所得税制度有什么不同",
	"为什么夏天白天比冬天长，和地球公转有什么关系",
	"分析一下新能源汽车降价对传统车企的影响",
	"鲁迅和老舍的写作风格有什么区别",
	"比较一下唐朝和宋朝的经济政策",
	"总结一下第二次工业革命带来的主要社会变化",
	"为什么通货膨胀会导致利率上升",
	"执导《霸王别姬》的导演出生在哪个城市",
	"《红楼梦》作者的祖父担任过什么官职",
	"华为和小米哪家公司成立得更早",
	"长江和黄河哪条河流经的省份更多",
	"写《活着》的作家和写《平凡的世界》的作家谁年纪更大",
	"李白和杜甫是否生活在同一个朝代，他们的诗风有何异同",
	"腾讯和阿里巴巴的创始人分别毕业于哪所大学",
	"北京和上海哪个城市的常住人口更多，原因是什么",
	"分析一下远程办公对团队协作效率的利弊",
	"云计算和边缘计算的适用场景有什么差别",
	"为什么这个季度的退货率比上个季度高这么多",
	"归纳一下近三年公司差旅费用上涨的主要原因",
	"把各部门的加班情况和调休使用情况放在一起分析一下",
	"请结合财务制度和审计要求，说明招待费为什么要事前审批",
	"如何评价今年新出的报销制度，和去年相比改进了哪些地方",
	"主演《让子弹飞》的演员中谁获得过金马奖最佳男主角",
	"京沪高铁和京广高铁哪条线路开通得更早",
	"比较Python和Go在并发编程上的设计思路",
	"为什么数据库要区分读写分离和分库分表，各自解决什么问题",
	"从成本和安全两方面分析一下自建机房和上云的取舍",
	"向量检索和关键词检索各有什么优缺点，什么时候应该混合使用",
}

var zhFactualTemplates = []string{
	"%s需要提交哪些材料",
	"%s多久能办好",
	"%s找谁审批",
	"%s的标准是多少",
	"怎么申请%s",
	"%s在哪个系统里提交",
	"%s的截止时间是什么时候",
	"%s需要提前几天申请",
	"%s的联系人是谁",
	"%s有额度限制吗",
	"%s的入口在哪里",
	"%s要填什么表",
	"%s一般几个工作日能处理完",
	"办理%s去哪个部门",
}

var zhFactualFixed = []string{
	"退货需要在签收后多少天内申请", "纸质发票多久能寄到", "年假一共有几天", "VPN连不上怎么办", "会议室怎么预订",
	"报销单要贴发票原件吗", "出差住宿标准是每晚多少钱", "工资几号发", "公积金每月缴多少比例", "试用期是几个月",
	"病假需要医院证明吗", "加班费怎么算", "餐补每天多少", "发票抬头写什么", "公司的税号是多少", "行政部电话是多少",
	"打印机坏了找谁修", "邮箱密码忘了怎么重置", "快递寄件走哪个账号", "离职要提前几天提", "婚假有几天",
	"产假是多少天", "新员工什么时候发电脑", "门禁卡丢了去哪里补", "访客要提前登记吗", "退款几天能到账",
	"换货运费谁承担", "订单发货后还能取消吗", "保修期是多长时间", "发票丢了能补开吗", "合同需要几份原件",
	"差旅报销的上限是多少", "招待报销需要什么审批", "哪些费用可以报销", "报销多久能到账", "年假可以跨年使用吗",
	"谁负责审批采购申请", "公司班车几点发车", "食堂几点开门", "考勤打卡时间是几点", "年会在哪一天",
}

var enTopics = []string{
	"a refund", "a return", "an expense claim", "travel reimbursement", "an entertainment expense", "annual leave",
	"sick leave", "parental leave", "vpn access", "a password reset", "a meeting room booking", "a contract signature",
	"a purchase request", "overtime pay", "a payslip", "a laptop request", "an e-invoice", "a business trip hotel",
	"a badge replacement", "an employment certificate", "a vendor onboarding", "a software license request",
}

var enPairs = [][2]string{
	{"travel expenses", "entertainment expenses"}, {"annual leave", "comp time"}, {"sick leave", "personal leave"},
	{"returns", "exchanges"}, {"e-invoices", "paper invoices"}, {"fixed-term contracts", "open-ended contracts"},
	{"employees", "contractors"}, {"remote work", "office work"}, {"domestic trips", "international trips"},
	{"the vpn", "the zero trust gateway"}, {"purchase requests", "payment requests"}, {"the old expense policy", "the new expense policy"},
	{"standard shipping", "express shipping"}, {"company cards", "personal reimbursement"}, {"store credit", "a cash refund"},
}

var enAspects = []string{"approval process", "limits", "required documents", "processing time", "eligibility rules", "costs", "risks"}

var enCompare = []string{
	"compare %[1]s and %[2]s in terms of %[3]s",
	"what is the difference between %[1]s and %[2]s when it comes to %[3]s",
	"how do the %[3]s for %[1]s differ from %[2]s",
	"can you contrast %[1]s with %[2]s regarding %[3]s",
	"pros and cons of %[1]s versus %[2]s for %[3]s",
	"put the %[3]s of %[1]s and %[2]s side by side in a table",
	"why are the %[3]s for %[1]s different from %[2]s",
	"which is better for %[3]s, %[1]s or %[2]s, and why",
}

var enSingleAnalytical = []string{
	"walk me through the whole process for %s end to end",
	"why does %s need so many approval steps",
	"summarize every rule that applies to %s",
	"analyze where %s usually gets stuck and why",
	"what happens if %s is rejected and what are the options afterwards",
	"how does %s interact with the finance and hr policies",
	"explain how the policy on %s changed over the last two years and why",
	"evaluate whether our current process for %s makes sense",
}

var enGeneralAnalytical = []string{
	"why do interest rates rise when inflation goes up",
	"compare the economic policies of the tang and song dynasties",
	"how does remote work affect team productivity and what are the tradeoffs",
	"what are the pros and cons of vector search versus keyword search",
	"explain how the two wars differed in their causes and outcomes",
	"why did our return rate increase so much this quarter compared to last quarter",
	"summarize the main causes behind the rise in travel costs over three years",
	"how does the new reimbursement policy compare with the old one and what improved",
	"analyze the impact of price cuts in electric cars on traditional automakers",
	"what are the differences between cloud computing and edge computing use cases",
}

var enFactualTemplates = []string{
	"how long does %s take",
	"who approves %s",
	"what documents do i need for %s",
	"where do i submit %s",
	"what is the deadline for %s",
	"how do i request %s",
	"is there a limit on %s",
	"which system handles %s",
	"who do i contact about %s",
	"how many days in advance should i ask for %s",
}

var enFactualFixed = []string{
	"how many days of annual leave do i get", "how long does a refund take", "what is the hotel limit per night on business trips",
	"when is payday", "how do i reset my email password", "how do i book a meeting room", "the vpn is not connecting what should i do",
	"what is the daily meal allowance", "what is the company tax id", "how long is the probation period",
	"do i need a doctor's note for sick leave", "how is overtime paid", "can annual leave be carried over to next year",
	"how many days do i have to return an item", "who pays for return shipping", "can i cancel an order after it ships",
	"how long is the warranty", "can a lost invoice be reissued", "when does the cafeteria open", "what time is the shuttle bus",
	"how many copies of the contract do we need", "what expenses can be reimbursed", "when will my reimbursement be paid",
	"where do i get a new badge", "do visitors need to register in advance", "what is the notice period for resignation",
}

var zhChitchat = []string{
	"你好", "您好", "嗨", "哈喽", "在吗", "在不在", "你好呀", "早上好", "晚上好", "下午好", "你是谁", "你能做什么",
	"你会干什么", "你叫什么名字", "谢谢", "谢谢你", "好的谢谢", "多谢了", "再见", "拜拜", "晚安", "哈哈哈", "你真棒",
	"你好厉害", "我今天心情不好", "陪我聊聊天吧", "你是机器人吗", "你几岁了", "给我讲个笑话", "今天好累啊",
	"你喜欢什么颜色", "辛苦了", "没事了", "好的", "明白了", "收到", "很高兴认识你", "你好，你是谁", "嗨，最近怎么样",
	"你好，很高兴认识你", "你今天过得怎么样", "我好无聊", "你会唱歌吗", "你有男朋友吗", "你吃饭了吗", "周末愉快",
	"你真可爱", "你好笨啊", "算了不问了", "你是真人吗", "你好，在吗", "早啊", "嘿，你好", "谢谢你的帮助",
	"你说话真有意思", "我们可以做朋友吗", "你喜欢我吗", "今天天气真不错啊", "我要下班啦", "新年快乐",
}

var enChitchat = []string{
	"hi", "hello", "hey there", "good morning", "good evening", "thanks", "thank you so much", "bye", "see you later",
	"who are you", "what can you do", "what's your name", "are you a robot", "tell me a joke", "how are you doing",
	"i'm bored", "you're awesome", "nice to meet you", "lol", "ok cool", "got it thanks", "have a nice day",
	"hello, what can you do", "what's up", "how's your day going", "i love you", "you're funny", "can we be friends",
	"do you like music", "sing me a song", "i'm so happy today", "good night", "never mind", "that's all",
	"cheers", "hi, who are you", "hey, how's it going", "happy new year", "you're not very smart", "are you real",
	"hello there, nice to meet you", "thanks for your help", "you made my day", "i'm heading home now",
}

var zhGreetings = []string{"你好，", "您好，", "嗨，", "在吗？", "你好，顺便问下", "您好，想问一下", "哈喽，请问", "早上好，问下", "你好呀，", "打扰一下，"}
var enGreetings = []string{"hi, ", "hello, ", "hey, quick question: ", "hi there, ", "good morning, ", "hello, by the way, ", "hey! ", "hi, sorry to bother you, "}

type example struct {
	text, label string
}

// ownExamples returns the generated examples; rng makes sampling
// reproducible.
func ownExamples(rng *rand.Rand) []example {
	var out []example
	add := func(label string, texts ...string) {
		for _, t := range texts {
			out = append(out, example{t, label})
		}
	}
	sample := func(all []string, n int) []string {
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		return all[:min(n, len(all))]
	}
	// Chinese analytical.
	var zhA []string
	for _, p := range zhPairs {
		for _, a := range zhAspects {
			for _, tpl := range zhCompare {
				zhA = append(zhA, fmt.Sprintf(tpl, p[0], p[1], a))
			}
		}
	}
	add("analytical", sample(zhA, 300)...)
	var zhS []string
	for _, t := range zhTopics {
		for _, tpl := range zhSingleAnalytical {
			zhS = append(zhS, fmt.Sprintf(tpl, t))
		}
	}
	add("analytical", sample(zhS, 150)...)
	add("analytical", zhGeneralAnalytical...)
	// Chinese factual.
	var zhF []string
	for _, t := range zhTopics {
		for _, tpl := range zhFactualTemplates {
			zhF = append(zhF, fmt.Sprintf(tpl, t))
		}
	}
	zhFs := sample(zhF, 250)
	add("factual", zhFs...)
	add("factual", zhFactualFixed...)
	// English analytical and factual.
	var enA []string
	for _, p := range enPairs {
		for _, a := range enAspects {
			for _, tpl := range enCompare {
				enA = append(enA, fmt.Sprintf(tpl, p[0], p[1], a))
			}
		}
	}
	add("analytical", sample(enA, 200)...)
	var enS []string
	for _, t := range enTopics {
		for _, tpl := range enSingleAnalytical {
			enS = append(enS, fmt.Sprintf(tpl, t))
		}
	}
	add("analytical", sample(enS, 100)...)
	add("analytical", enGeneralAnalytical...)
	var enF []string
	for _, t := range enTopics {
		for _, tpl := range enFactualTemplates {
			enF = append(enF, fmt.Sprintf(tpl, t))
		}
	}
	enFs := sample(enF, 150)
	add("factual", enFs...)
	add("factual", enFactualFixed...)
	add("factual", enGeneralFactual...)
	add("factual", zhGeneralFactual...)
	add("chitchat", moreChitchat...)
	add("factual", firstPersonFactual...)
	add("analytical", howWorksAnalytical...)
	// Chitchat, alone and behind greetings.
	add("chitchat", zhChitchat...)
	add("chitchat", enChitchat...)
	// Greeting + real question: labelled by the question, never chitchat.
	for i, q := range append(append([]string{}, zhFactualFixed...), zhFs[:60]...) {
		add("factual", zhGreetings[i%len(zhGreetings)]+q)
	}
	for i, q := range sample(append([]string{}, zhA...), 40) {
		add("analytical", zhGreetings[(i+3)%len(zhGreetings)]+q)
	}
	for i, q := range append(append([]string{}, enFactualFixed...), enFs[:40]...) {
		g := enGreetings[i%len(enGreetings)]
		if i%2 == 0 {
			q = strings.ToUpper(q[:1]) + q[1:] + "?"
		}
		add("factual", g+q)
	}
	for i, q := range sample(append([]string{}, enA...), 30) {
		add("analytical", enGreetings[(i+5)%len(enGreetings)]+q)
	}
	return out
}

// General-knowledge single-fact questions, some wrapped in polite requests
// or phrased as short "why" questions, so that shape alone never reads as
// chitchat.
var enGeneralFactual = []string{
	"do you know who wrote hamlet", "can you tell me when the eiffel tower was built", "why is the sky blue",
	"what year did world war two end", "what is the capital of australia", "could you tell me how tall mount everest is",
	"do you know the boiling point of water in fahrenheit", "why do cats purr", "what does dna stand for",
	"who painted the mona lisa", "how many moons does mars have", "i want to know who invented the telephone",
	"when did the berlin wall fall", "what language is spoken in brazil", "why do leaves change color in autumn",
	"how far is the moon from the earth", "who was the first person to walk on the moon", "what is the speed of light",
	"tell me who discovered penicillin", "what currency does japan use", "where is the great barrier reef",
	"how many players are on a soccer team", "who is the ceo of microsoft", "what is the largest ocean",
	"why do we have leap years", "do you happen to know when the olympics started", "what is the population of canada",
}

var zhGeneralFactual = []string{
	"你知道红楼梦的作者是谁吗", "能告诉我珠穆朗玛峰有多高吗", "天空为什么是蓝色的", "第二次世界大战是哪一年结束的",
	"澳大利亚的首都是哪里", "水的沸点是多少度", "谁发明了电话", "柏林墙是哪一年倒塌的", "巴西说什么语言",
	"月球离地球有多远", "第一个登上月球的人是谁", "光速是多少", "青霉素是谁发现的", "日本用什么货币",
	"长城有多长", "中国有多少个省级行政区", "我想知道故宫是哪一年建成的", "帮我查一下上海的区号是多少",
	"请告诉我奥运会是哪一年开始的", "一年为什么有闰年", "地球上最大的海洋是哪个", "足球比赛每队有几个人",
}

var moreChitchat = []string{
	"你知道我是谁吗", "你觉得我怎么样", "你会讲故事吗", "你平时喜欢做什么", "能陪我聊会儿天吗", "你知道我今天有多累吗",
	"tell me about yourself", "can you be my friend", "what do you like to do for fun", "do you know me",
	"can you sing", "what's your favorite movie", "do you ever sleep", "are you smarter than me", "do you have feelings",
	"what are you up to", "i had a rough day", "can you keep a secret", "you're pretty cool", "how old are you",
}

// First-person requests about work matters are substantive, even though
// "I want ..." opens much chitchat.
var firstPersonFactual = []string{
	"我想请三天假怎么操作", "我想报销打车费要怎么做", "我想换个显示器找谁", "我想预订明天下午的会议室", "我要开发票",
	"我要退货", "我要改密码", "我的工资条在哪里看", "我的报销单被退回了怎么办", "我想申请远程办公需要什么手续",
	"我的电脑开不了机找谁", "我想查一下我还剩几天年假", "我要寄个快递走哪个流程", "我想开在职证明", "我的门禁卡坏了",
	"i want to return my order how do i do that", "i need a new laptop who do i ask", "i'd like to book a meeting room for tomorrow",
	"i lost my badge", "i need to reset my password", "i want to claim my taxi fare", "my expense report was rejected what now",
	"i need an employment certificate", "i can't connect to the vpn", "my laptop won't turn on who can fix it",
	"i want to check how many leave days i have left", "i need to ship a package for work",
}

var howWorksAnalytical = []string{
	"how does a vaccine work", "how do airplanes stay in the air", "how does the stock market work",
	"how does compound interest work", "how does photosynthesis work", "how do noise cancelling headphones work",
	"how does the approval chain for purchases work", "how does inflation affect savings",
	"疫苗是怎么起作用的", "电动汽车的电池是怎么工作的", "股票市场是如何运作的", "复利是怎么计算出来的，为什么增长这么快",
	"采购审批链是怎么运作的", "通货膨胀是如何影响储蓄的",
}
