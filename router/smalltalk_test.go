package router_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/adaptrag/adaptrag/router"
)

func TestDetectSmallTalk(t *testing.T) {
	tests := []struct {
		text string
		kind router.SmallTalkKind
		only bool
	}{
		{"你好", router.SmallTalkGreeting, true},
		{"thanks!", router.SmallTalkThanks, true},
		{"谢谢你", router.SmallTalkThanks, true},
		{"good morning", router.SmallTalkGreeting, true},
		{"bye", router.SmallTalkFarewell, true},
		{"你能做什么", router.SmallTalkCapability, true},
		{"What can you do?", router.SmallTalkCapability, true},
		{"ok got it", router.SmallTalkAck, true},
		{"ＨＥＬＬＯ！！", router.SmallTalkGreeting, true},
		{"Byeee 👋", router.SmallTalkFarewell, true},
		{"thanksss a lot, mate", router.SmallTalkThanks, true},
		{"hahaha", router.SmallTalkAck, true},
		{"👍", router.SmallTalkAck, true},
		{"🙏", router.SmallTalkThanks, true},
		{"谢谢，再见", router.SmallTalkThanks, true},
		{"早啊", router.SmallTalkGreeting, true},
		{"How's it going?", router.SmallTalkGreeting, true},
		// A greeting before a question, or anything else left over, is
		// not only small talk.
		{"你好，顺便问下电子发票多久能开好", router.SmallTalkGreeting, false},
		{"hi, how long does a refund take", router.SmallTalkGreeting, false},
		{"thanks, P-204?", router.SmallTalkThanks, false},
		{"VPN 691 谢谢", router.SmallTalkThanks, false},
		{"hello 2", router.SmallTalkGreeting, false},
		// Keyword queries and nouns that start like small talk.
		{"VPN", router.NoSmallTalk, false},
		{"NIST 800-88", router.NoSmallTalk, false},
		{"北京 住宿 标准", router.NoSmallTalk, false},
		{"早餐补贴", router.NoSmallTalk, false},
		{"好评返现", router.NoSmallTalk, false},
		{"history of rome", router.NoSmallTalk, false},
		{"", router.NoSmallTalk, false},
		{"？？", router.NoSmallTalk, false},
		{"😀", router.NoSmallTalk, false},
	}
	for _, tt := range tests {
		got := router.DetectSmallTalk(tt.text)
		if got.Kind != tt.kind || got.Only != tt.only {
			t.Errorf("DetectSmallTalk(%q) = %+v, want kind %q only %v", tt.text, got, tt.kind, tt.only)
		}
		if tt.kind != router.NoSmallTalk && !got.Has(tt.kind) {
			t.Errorf("DetectSmallTalk(%q).Has(%q) = false", tt.text, tt.kind)
		}
	}
	st := router.DetectSmallTalk("你好，你能做什么？")
	if !st.Only || st.Kind != router.SmallTalkGreeting || !st.Has(router.SmallTalkCapability) || st.Has(router.SmallTalkThanks) || st.Has(router.NoSmallTalk) {
		t.Errorf("你好，你能做什么？: %+v", st)
	}
}

// The detector and the offline classifier share one lexicon: what is only
// small talk is routed to chitchat, and no substantive query of the terse
// set is only small talk.
func TestSmallTalkAgreesWithOffline(t *testing.T) {
	items, err := router.LoadJSONL(filepath.Join("testdata", "terse.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	o := offline(t)
	for _, it := range items {
		st := router.DetectSmallTalk(it.Text)
		if it.Label == "substantive" && st.Only {
			t.Errorf("%q: substantive query detected as only small talk", it.Text)
		}
		if !st.Only {
			continue
		}
		p, err := o.Classify(context.Background(), it.Text)
		if d := router.Decide(p, err, router.DefaultMinConfidence); d.Route != router.Chitchat {
			t.Errorf("%q: only small talk (%s) but routed %s (%+v)", it.Text, st.Kind, d.Route, p)
		}
	}
}

func FuzzDetectSmallTalk(f *testing.F) {
	for _, s := range []string{"你好", "thanks!", "byeee 👋", "NIST 800-88", "你好，顺便问下电子发票多久能开好", "\xff\xfe", "hahahah", "早早早"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st := router.DetectSmallTalk(s)
		if st.Only && st.Kind == router.NoSmallTalk {
			t.Fatalf("%q: only small talk of no kind", s)
		}
		if (st.Kind == router.NoSmallTalk) != (st == router.SmallTalk{}) {
			t.Fatalf("%q: %+v", s, st)
		}
	})
}

func BenchmarkDetectSmallTalk(b *testing.B) {
	qs := []string{"你好", "Thanks a lot!", "你好，顺便问下电子发票多久能开好", "NIST 800-88", "what can you help me with?", "北京 住宿 标准"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = router.DetectSmallTalk(qs[i%len(qs)])
		i++
	}
}

func ExampleDetectSmallTalk() {
	for _, q := range []string{"谢谢，再见！", "Hiii 👋", "你好，顺便问下电子发票多久能开好", "NIST 800-88"} {
		st := router.DetectSmallTalk(q)
		fmt.Printf("%q kind=%q only=%v\n", q, st.Kind, st.Only)
	}
	// Output:
	// "谢谢，再见！" kind="thanks" only=true
	// "Hiii 👋" kind="greeting" only=true
	// "你好，顺便问下电子发票多久能开好" kind="greeting" only=false
	// "NIST 800-88" kind="" only=false
}
