package feat

import (
	"math"
	"testing"
)

func TestFindTalk(t *testing.T) {
	tests := []struct {
		text        string
		kind        TalkKind
		only, ident bool
	}{
		{"你好", TalkGreeting, true, false},
		{"Thanks heaps!!!", TalkThanks, true, false},
		{"byeeee", TalkFarewell, true, false},
		{"hehehe", TalkAck, true, false},
		{"你都能做些什么", TalkCapability, true, false},
		{"🙏", TalkThanks, true, false},
		{"g2g", TalkFarewell, true, true},
		{"hi R2-D2", TalkGreeting, false, true},
		{"早餐", TalkNone, false, false}, // 早 alone greets; 早餐 is breakfast
		{"早", TalkGreeting, true, false},
		{"max_connections", TalkNone, false, true},
		{"spring.datasource.url", TalkNone, false, true},
		{"ops@example", TalkNone, false, true},
		{"Dr. Smith", TalkNone, false, false},
	}
	for _, tt := range tests {
		got := FindTalk(tt.text)
		if got.Kind != tt.kind || got.Only != tt.only || got.Ident != tt.ident {
			t.Errorf("FindTalk(%q) = %+v, want kind %d only %v ident %v", tt.text, got, tt.kind, tt.only, tt.ident)
		}
	}
}

func TestChatEvidence(t *testing.T) {
	for text, want := range map[string]bool{
		// keyword queries: no evidence
		"NIST 800-88": false, "error 0x80070005": false, "ISO 27001": false, "CrashLoopBackOff": false,
		"北京 住宿 标准": false, "expense limit travel": false, "VPN": false, "发票": false, "P-204 退货": false,
		"hello P-204": false, "P-204 thanks": false, "你好 VPN 691": false,
		// conversation
		"hello": true, "谢谢你": true, "I'm bored": true, "tell me a joke": true, "今天好累啊": true,
		"I'd better go": true, "hi Cortana": true, "你喜欢什么颜色": true, "那外包呢": true,
	} {
		if got := Analyze(text).Chat; got != want {
			t.Errorf("Analyze(%q).Chat = %v, want %v", text, got, want)
		}
	}
}

func TestProbsRules(t *testing.T) {
	m := &Model{Buckets: 1, Temperature: 1, TalkPrecision: 0.99, W: []float32{0, 0, 5}} // every query leans chitchat
	feats := []uint32{0}
	if p := m.Probs(feats, Gate{Chat: true}); p[Chitchat] < 0.9 {
		t.Fatalf("ungated %v", p)
	}
	p := m.Probs(feats, Gate{Chat: false})
	if p[Chitchat] != 0 || math.Abs(p[0]+p[1]-1) > 1e-9 {
		t.Errorf("no evidence of conversation: %v", p)
	}
	m.W = []float32{5, 0, 0} // leans factual
	p = m.Probs(feats, Gate{Chat: true, Only: true})
	if math.Abs(p[Chitchat]-0.99) > 1e-6 || math.Abs(p[0]+p[1]+p[2]-1) > 1e-9 {
		t.Errorf("only small talk: %v", p)
	}
}

func BenchmarkFindTalk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = findTalk("你好，顺便问下电子发票多久能开好", "你好 顺便问下电子发票多久能开好", 0)
	}
}

// Questions to an organization and keyword lists built of small-talk or
// social words carry no evidence of conversation; sentences of social talk
// and greetings with a name do.
func TestChatEvidenceServiceAndKeywords(t *testing.T) {
	for text, want := range map[string]bool{
		"are you open on public holidays?": false,
		"do you take walk-in patients":     false,
		"你们周末营业吗":                          false,
		"happy hour":                       false,
		"晚安 套餐":                            false,
		"开心果 过敏":                           false,
		"hi Alexa":                         true,
		"Somebody's happy today":           true,
		"funny":                            true,
		"do you like music?":               true,
		"你喜欢听歌吗":                           true,
		"thanks, are you open tomorrow?":   false,
		"谢谢你们":                             true,
	} {
		if got := Analyze(text).Chat; got != want {
			t.Errorf("%q: chat evidence %v, want %v", text, got, want)
		}
	}
}
