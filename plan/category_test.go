package plan

import (
	"testing"
)

func TestQuestionCategory(t *testing.T) {
	p := New(testSettings)
	tests := []struct {
		text, want string
	}{
		{"报销费用超过5000需要谁审批", CategoryPricing},
		{"差旅补贴标准是多少", CategoryPricing},
		{"电子发票多久能开好", CategoryPricing},
		{"What is the fee for a replacement badge?", CategoryPricing},
		{"How are travel expenses reimbursed?", CategoryPricing},
		{"员工隐私数据保存多久", CategoryCompliance},
		{"审计需要准备什么", CategoryCompliance},
		{"Does the NDA cover contractors?", CategoryCompliance},
		{"Is this GDPR compliant?", CategoryCompliance},
		{"VPN 连不上怎么处理", CategoryTroubleshooting},
		{"打印机报错0x61", CategoryTroubleshooting},
		{"Outlook keeps failing to sync", CategoryTroubleshooting},
		{"I cannot connect to the VPN", CategoryTroubleshooting},
		{"总结一下新员工入职要做的事", CategorySummary},
		{"Give me an overview of the onboarding steps", CategorySummary},
		{"年假有几天", CategoryDefault},
		{"How many days of annual leave do I get?", CategoryDefault},
		// Word matching: "fee" is not "feedback", "pay" is not "paywall".
		{"Where do I send feedback?", CategoryDefault},
		{"", CategoryDefault},
	}
	for _, tc := range tests {
		if got := p.QuestionCategory(Query{Text: tc.text}); got != tc.want {
			t.Errorf("QuestionCategory(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestCategoryPrecedence: compliance > pricing > troubleshooting > summary.
func TestCategoryPrecedence(t *testing.T) {
	p := New(testSettings)
	tests := []struct {
		text, want string
	}{
		{"合同付款金额怎么确定", CategoryCompliance},                           // compliance + pricing
		{"报销系统提交失败", CategoryPricing},                                // pricing + troubleshooting
		{"汇总一下最近的故障", CategoryTroubleshooting},                       // troubleshooting + summary
		{"对比差旅报销和招待报销", CategoryPricing},                             // pricing + summary
		{"Summarize the contract payment terms", CategoryCompliance}, // all but troubleshooting
	}
	for _, tc := range tests {
		if got := p.QuestionCategory(Query{Text: tc.text}); got != tc.want {
			t.Errorf("QuestionCategory(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestIsTableQuery holds the reference table of table-shaped and ordinary
// questions, its rule-4 examples, and English equivalents.
func TestIsTableQuery(t *testing.T) {
	p := New(testSettings)
	tests := []struct {
		text string
		want bool
	}{
		// not table-shaped
		{"报销流程是什么", false},
		{"VPN 连不上怎么处理", false},
		{"合同审批流程有哪些步骤", false},
		// table-shaped
		{"报销材料清单里发票字段怎么填", true},
		{"故障台账里的责任人字段是谁", true},
		{"付款节点明细表里超过 5000 的审批要求是什么", true},
		// the table rule's examples
		{"材料清单里的付款金额字段是什么", true},
		{"验收表里责任人字段在哪里", true},
		{"付款节点明细有哪些", true},
		// one row item alone is an ordinary question; two describe a row
		{"报销金额上限是多少", false},
		{"每个付款节点的金额是多少", true},
		// the worked examples other than the table one
		{"异地入职材料办理时需要准备哪些资料和审批信息", false},
		{"报销费用超过5000需要谁审批", false},
		{"公司会议室预约规则在哪里查看以及需要遵守哪些流程要求", false},
		// English
		{"Which column of the expense spreadsheet holds the amount?", true},
		{"Give me the list of approved vendors", true},
		{"What goes in the cost center field?", true},
		{"Who is the owner of each line item?", true},
		{"What is the reimbursement process?", false},
		{"How do I fix a VPN error?", false},
		{"Where is the office?", false},
	}
	for _, tc := range tests {
		if got := p.IsTableQuery(Query{Text: tc.text}); got != tc.want {
			t.Errorf("IsTableQuery(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestContentUnits(t *testing.T) {
	tests := []struct {
		text string
		want float64
	}{
		{"报销费用超过5000需要谁审批", 12}, // 11 characters + one number
		{"材料清单里的付款金额字段是什么", 15},
		{"审批呢", 2},   // trailing particle not counted
		{"审批呢？", 2},  // nor the punctuation after it
		{"呢喃是什么", 5}, // a particle inside the question counts
		{"登录", 2},
		{"5,000.50 元", 2},
		{"VPN 连不上", 4.5},
		{"what about approval?", 4.5},
		{"ＶＰＮ", 1.5},
		{"", 0},
		{"？！", 0},
		{"\xff\xfe", 0},
	}
	for _, tc := range tests {
		if got := ContentUnits(tc.text); got != tc.want {
			t.Errorf("ContentUnits(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestIsShortQuery(t *testing.T) {
	p := New(testSettings)
	tests := []struct {
		text string
		want bool
	}{
		{"报销费用超过5000需要谁审批", true},
		{"材料清单里的付款金额字段是什么", false},
		{"登录", true},
		{"审批呢", true},
		{"费用", true},
		{"异地入职材料办理时需要准备哪些资料和审批信息", false},
		{"reset password", true},
		{"How do I configure the VPN client on a new laptop?", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := p.IsShortQuery(Query{Text: tc.text}); got != tc.want {
			t.Errorf("IsShortQuery(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	// The limit is a setting.
	strict := New(Settings{ShortQueryMaxUnits: 4})
	if strict.IsShortQuery(Query{Text: "报销费用超过5000需要谁审批"}) {
		t.Error("ShortQueryMaxUnits 4: a 12-unit question is still short")
	}
	if !strict.IsShortQuery(Query{Text: "登录"}) {
		t.Error("ShortQueryMaxUnits 4: a 2-unit question is not short")
	}
}
