package query_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/query"
)

func u(s string) query.Message { return query.Message{Role: "user", Content: s} }
func a(s string) query.Message { return query.Message{Role: "assistant", Content: s} }

func TestOfflineRewrite(t *testing.T) {
	tests := []struct {
		name     string
		history  []query.Message
		question string
		rule     string
		text     string   // exact Text, when set
		has      []string // substrings of Text
		hasNot   []string
	}{
		// References.
		{"pronoun", []query.Message{u("What is the after-sales policy for the P-204 battery?")}, "Can it be exchanged?", query.RuleReference, "Can P-204 be exchanged?", nil, nil},
		{"possessive with order cue", []query.Message{u("订单 A100 什么时候发货？")}, "它的产品适用哪份特殊规则？", query.RuleReference, "订单 A100的产品适用哪份特殊规则？", nil, nil},
		{"determiner before a noun", []query.Message{u("Windows 更新报错 0x80070005 怎么办？"), a("通常是权限问题。")}, "这个错误会影响开机吗？", query.RuleReference, "0x80070005 错误会影响开机吗？", nil, nil},
		{"times keep their role", []query.Message{u("I ordered the X-300 blender last month.")}, "Can I return it?", query.RuleReference, "Can I return X-300 (purchased last month)?", nil, nil},
		{"plural", []query.Message{u("SKU-3381 和 SKU-3390 哪款噪音小？")}, "它们都支持七天无理由退货吗？", query.RuleReference, "", []string{"SKU-3381", "SKU-3390"}, nil},
		{"which one lists the candidates", []query.Message{u("P-204 and P-205 look similar.")}, "Which one is cheaper?", query.RuleReference, "Which one (P-204 or P-205) is cheaper?", nil, nil},
		{"an answer quoting its evidence adds no candidates", []query.Message{u("What is the warranty on the LT-450?"), a("The LT-450 has two years; the LT-460 and the DK-3 have one year.")}, "Can I return it?", query.RuleReference, "Can I return LT-450?", nil, nil},
		{"答案引用的其他型号不是指代对象", []query.Message{u("P-204 电池的售后政策是什么？"), a("P-204 保修一年；P-205 和 H-310 保修两年。")}, "那这个能换吗？", query.RuleReference, "", []string{"P-204"}, []string{"P-205", "H-310"}},
		{"latest exchange wins", []query.Message{u("P-204 保修多久？"), a("一年。"), u("P-205 呢？"), a("两年。")}, "它能换新吗？", query.RuleReference, "P-205能换新吗？", nil, nil},
		{"no candidate: topic carried", []query.Message{u("试用期员工能申请年假吗？")}, "那他们能请病假吗？", query.RuleUnresolved, "", []string{"试用期", "病假"}, nil},
		{"dummy it is not a reference", []query.Message{u("My LT-450 won't boot.")}, "How long does it take to get reimbursed for travel?", query.RuleStandalone, "How long does it take to get reimbursed for travel?", nil, nil},
		{"antecedent inside the question", []query.Message{u("P-204 的保修期多久？")}, "为什么哈佛终止了它的提前录取计划？", query.RuleStandalone, "为什么哈佛终止了它的提前录取计划？", nil, nil},
		{"demonstrative before its own entity", []query.Message{u("P-204 的退货政策是什么？")}, "这个 P-205 能退吗？", query.RuleStandalone, "这个 P-205 能退吗？", nil, []string{"P-204"}},
		// Elided questions.
		{"entity swap", []query.Message{u("P-204 的保修期多久？")}, "P-205 呢？", query.RuleEllipsisEntity, "P-205 的保修期多久？", nil, nil},
		{"same prefix slot", []query.Message{u("Is the LT-450 compatible with the DK-2 dock?")}, "What about the DK-3?", query.RuleEllipsisEntity, "Is the LT-450 compatible with the DK-3 dock?", nil, nil},
		{"bare number keeps the unit", []query.Message{u("退货期限是 30 天吗？")}, "那 40 呢？", query.RuleEllipsisEntity, "退货期限是 40 天吗？", nil, nil},
		{"amount", []query.Message{u("报销 5000 元以上需要谁批？")}, "那2万元呢？", query.RuleEllipsisEntity, "报销 2万元以上需要谁批？", nil, nil},
		{"chained ellipsis", []query.Message{u("P-204 保修多久？"), a("一年。"), u("P-205 呢？"), a("两年。")}, "那 P-206 呢？", query.RuleEllipsisEntity, "P-206 保修多久？", nil, nil},
		{"time word", []query.Message{u("上个月的报销什么时候到账？")}, "那这个月的呢？", query.RuleEllipsisEntity, "这个月的报销什么时候到账？", nil, nil},
		{"subject", []query.Message{u("差旅报销要在多少天内提交？")}, "招待费呢？", query.RuleEllipsisSubject, "招待费要在多少天内提交？", nil, nil},
		{"subject before a verb", []query.Message{u("服务器快照保留多久？")}, "那笔记本呢？", query.RuleEllipsisSubject, "笔记本保留多久？", nil, nil},
		{"which with a comparative later", []query.Message{u("对比一下 X-100 和 X-200 的电池")}, "哪个充电更快？", query.RuleReference, "哪个（X-100、X-200）充电更快？", nil, nil},
		{"a superlative is no topic", []query.Message{u("未休完的年假能结转吗？")}, "最多几天？", query.RuleCarry, "未休完 年假 结转：最多几天？", nil, nil},
		{"head noun zh", []query.Message{u("差旅住宿费的报销标准是多少？")}, "餐费呢？", query.RuleEllipsisHead, "餐费的报销标准是多少？", nil, nil},
		{"head noun en", []query.Message{u("How many days of annual leave do new employees get?")}, "And sick leave?", query.RuleEllipsisHead, "How many days of sick leave do new employees get?", nil, nil},
		{"preposition", []query.Message{u("Is the remote work stipend taxable for full-time staff?")}, "And for contractors?", query.RuleEllipsisPreposition, "Is the remote work stipend taxable for contractors?", nil, nil},
		{"contrast zh", []query.Message{u("国内快递一般几天送达？")}, "国际的呢？", query.RuleEllipsisContrast, "国际快递一般几天送达？", nil, nil},
		{"contrast en", []query.Message{u("Do I get overtime pay for working on holidays?")}, "What about weekends?", query.RuleEllipsisContrast, "Do I get overtime pay for working on weekends?", nil, nil},
		// Staff roles are no contrast set of the code (they are one
		// knowledge base's words): without a vocabulary naming them the
		// question is kept, or the shared head decides.
		{"roles are no contrast set", []query.Message{u("How many vacation days do interns get?")}, "What about full-time staff?", query.RuleKept, "What about full-time staff?", nil, nil},
		{"a shared head replaces the modifier", []query.Message{u("How many vacation days do part-time staff get?")}, "What about full-time staff?", query.RuleEllipsisHead, "How many vacation days do full-time staff get?", nil, nil},
		{"a unit is no topic", []query.Message{u("Can I carry over unused annual leave?")}, "How many days?", query.RuleCarry, "carry unused annual leave: How many days?", nil, nil},
		{"name en", []query.Message{u("What's the per diem in Tokyo?")}, "What about Osaka?", query.RuleEllipsisName, "What's the per diem in Osaka?", nil, nil},
		{"code of digits keeps its cue", []query.Message{u("What does error 809 mean?")}, "How do I fix it?", query.RuleReference, "How do I fix error 809?", nil, nil},
		{"subject en", []query.Message{u("How long are server snapshots kept?")}, "And laptop backups?", query.RuleEllipsisSubject, "How long are laptop backups kept?", nil, nil},
		{"subject en after a verb", []query.Message{u("Who owns the backup system?")}, "And the VPN?", query.RuleEllipsisSubject, "Who owns the VPN?", nil, nil},
		{"subject en with a particle", []query.Message{u("How often are laptops backed up?")}, "What about servers?", query.RuleEllipsisSubject, "How often are servers backed up?", nil, nil},
		{"subject en, ambiguous: carried", []query.Message{u("How long does the approval of expense claims take?")}, "And travel?", query.RuleKept, "And travel?", nil, nil},
		{"Latin name in Chinese", []query.Message{u("VPN 连不上怎么办？")}, "那 Wi-Fi 呢？", query.RuleEllipsisName, "Wi-Fi 连不上怎么办？", nil, nil},
		{"contrast across scripts", []query.Message{u("iPhone 怎么连公司 Wi-Fi？")}, "安卓呢？", query.RuleEllipsisContrast, "安卓 怎么连公司 Wi-Fi？", nil, nil},
		{"X 也…吗", []query.Message{u("P-204 支持快充吗？")}, "P-205 也支持吗？", query.RuleEllipsisEntity, "P-205 支持快充吗？", nil, nil},
		{"modifier of the subject", []query.Message{u("北京的住宿标准是多少？")}, "那厦门呢？", query.RuleEllipsisSubject, "厦门的住宿标准是多少？", nil, nil},
		{"head inside a word is no head", []query.Message{u("P-204 的保修期多久？")}, "那延保呢？", query.RuleKept, "那延保呢？", nil, nil},
		{"bare term with a slot", []query.Message{u("差旅报销要在多少天内提交？")}, "招待费？", query.RuleEllipsisSubject, "招待费要在多少天内提交？", nil, nil},
		{"bare term without a slot is a new topic", []query.Message{u("P-204 的保修期多久？")}, "年假？", query.RuleStandalone, "年假？", nil, nil},
		{"no slot: carried", []query.Message{u("What's the warranty on the P-204?")}, "What about the return policy?", query.RuleKept, "What about the return policy?", nil, nil},
		{"small talk before the ellipsis", []query.Message{u("P-204 的保修期多久？")}, "好的，那 P-205 呢？", query.RuleEllipsisEntity, "P-205 的保修期多久？", nil, nil},
		// Carry.
		{"no topic: subject and time carried", []query.Message{u("P-205 是去年买的。")}, "现在能退吗？", query.RuleCarry, "P-205（去年购买）：现在能退吗？", nil, nil},
		{"continuation cue", []query.Message{u("The charger I bought last week stopped working.")}, "Can I still get a refund?", query.RuleCarry, "", []string{"charger", "last week", "refund"}, nil},
		{"own topic: alone", []query.Message{u("P-204 的保修期多久？")}, "电子发票多久能开好？", query.RuleStandalone, "电子发票多久能开好？", nil, nil},
		{"keyword query: alone", []query.Message{u("SKU-3381 的保修期是多久？")}, "报销 审批 5000", query.RuleStandalone, "报销 审批 5000", nil, nil},
		// Others.
		{"small talk", []query.Message{u("P-204 的保修期多久？"), a("一年。")}, "好的，谢谢", query.RuleSmallTalk, "好的，谢谢", nil, nil},
		{"no history", nil, "退货要在几天内发起？", query.RuleNoHistory, "退货要在几天内发起？", nil, nil},
		{"empty", []query.Message{u("P-204?")}, "  ", query.RuleEmpty, "  ", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := query.Offline{}.Rewrite(context.Background(), tt.question, tt.history)
			if err != nil {
				t.Fatal(err)
			}
			if r.Rule != tt.rule {
				t.Errorf("rule %q, want %q (text %q)", r.Rule, tt.rule, r.Text)
			}
			if tt.text != "" && r.Text != tt.text {
				t.Errorf("text %q, want %q", r.Text, tt.text)
			}
			for _, s := range tt.has {
				if !strings.Contains(r.Text, s) {
					t.Errorf("text %q lacks %q", r.Text, s)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(r.Text, s) {
					t.Errorf("text %q has %q", r.Text, s)
				}
			}
			if r.Rewritten != (r.Text != tt.question) {
				t.Errorf("Rewritten %v for %q -> %q", r.Rewritten, tt.question, r.Text)
			}
			if !reflect.DeepEqual(r.Entities, query.Entities(r.Text)) {
				t.Errorf("entities %+v are not those of %q", r.Entities, r.Text)
			}
		})
	}
}

func TestOfflineClarify(t *testing.T) {
	h := []query.Message{u("我买了 HB-20、HB-30 和 HB-40 三副耳机。"), a("好的。")}
	r, _ := query.Offline{}.Rewrite(context.Background(), "这个的保修期多久？", h)
	want := &query.Clarify{Mention: "这个", Candidates: []string{"HB-20", "HB-30", "HB-40"}}
	if !reflect.DeepEqual(r.Clarify, want) || r.Rule != query.RuleClarify || r.Text != "这个的保修期多久？" || !r.FollowUp {
		t.Fatalf("rewrite %+v", r)
	}
	// The assistant's answer is part of the exchange: P-204 and P-205 still compete.
	r, _ = query.Offline{}.Rewrite(context.Background(), "这个能换吗？", []query.Message{u("P-204 和 P-205 哪个更便宜？"), a("P-204 更便宜。")})
	if r.Clarify == nil || strings.Join(r.Clarify.Candidates, ",") != "P-204,P-205" {
		t.Fatalf("rewrite %+v", r)
	}
}

func TestOfflineResolutionTurn(t *testing.T) {
	h := []query.Message{u("VPN 报错 809 怎么解决？"), a("检查防火墙。"), u("我上周买了 HB-20 耳机。"), a("好的。")}
	r, _ := query.Offline{}.Rewrite(context.Background(), "它现在还能退吗？", h)
	want := []query.Resolution{{Mention: "它", Value: "HB-20", Turn: 2}}
	if !reflect.DeepEqual(r.Resolved, want) || r.Text != "HB-20（上周购买）现在还能退吗？" {
		t.Fatalf("rewrite %+v", r)
	}
}

func TestOfflineWindow(t *testing.T) {
	h := []query.Message{u("P-204 的保修期多久？"), a("一年。"), u("谢谢"), a("不客气。")}
	r, _ := query.Offline{Window: 2}.Rewrite(context.Background(), "它能换吗？", h)
	if r.Rule != query.RuleUnresolved || len(r.Unresolved) != 1 || strings.Contains(r.Text, "P-204") {
		t.Fatalf("outside the window P-204 must not be used: %+v", r)
	}
	r, _ = query.Offline{}.Rewrite(context.Background(), "它能换吗？", h)
	if r.Text != "P-204能换吗？" {
		t.Fatalf("rewrite %+v", r)
	}
}

func TestOfflineCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := query.Offline{}.Rewrite(ctx, "Can it be exchanged?", []query.Message{u("P-204?")})
	if !errors.Is(err, context.Canceled) || r.Text != "Can it be exchanged?" {
		t.Fatalf("rewrite %+v err %v", r, err)
	}
}

// TestOfflinePassesCheck: on every case of the test set, the offline
// rewrite keeps the question's entities and adds only what the history
// gives, the rules Check enforces on model rewrites.
func TestOfflinePassesCheck(t *testing.T) {
	cases, err := query.LoadCases("testdata/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		r, _ := query.Offline{}.Rewrite(context.Background(), c.Question, c.History)
		if err := query.Check(c.Question, c.History, r.Text); err != nil {
			t.Errorf("%s: %q -> %q: %v", c.ID, c.Question, r.Text, err)
		}
	}
}

func TestOfflineConcurrent(t *testing.T) {
	cases, err := query.LoadCases("testdata/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var off query.Offline
	want := make([]string, len(cases))
	for k, c := range cases {
		r, _ := off.Rewrite(context.Background(), c.Question, c.History)
		want[k] = r.Text
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for k, c := range cases {
				if r, _ := off.Rewrite(context.Background(), c.Question, c.History); r.Text != want[k] {
					t.Errorf("%s: %q, want %q", c.ID, r.Text, want[k])
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
