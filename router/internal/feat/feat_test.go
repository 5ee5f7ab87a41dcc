package feat

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"Hello, World!": "hello world",
		"  ＨＥＬＬＯ　ｗｏｒｌｄ？ ":   "hello world",
		"你好，顺便问下电子发票多久能开好？": "你好 顺便问下电子发票多久能开好",
		"What's up?":         "what is up",
		"whats up":           "what is up",
		"“The Old Man”—and…": "the old man and",
		"employee ID number": "employee id number",
		"":                   "",
		"???":                "",
	}
	for in, want := range tests {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenize(t *testing.T) {
	got := Tokenize(Normalize("VPN连不上, how to fix 它"))
	want := []Token{{"vpn", false}, {"连不上", true}, {"how", false}, {"to", false}, {"fix", false}, {"它", true}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestStripGreeting(t *testing.T) {
	tests := []struct {
		in, rest string
		stripped bool
	}{
		{"你好 顺便问下电子发票多久能开好", "电子发票多久能开好", true},
		{"hi quick question how long does a refund take", "how long does a refund take", true},
		{"history of rome", "history of rome", false},
		{"hello", "", true},
		{"do you know who wrote hamlet", "who wrote hamlet", true},
		{"tell me a joke", "tell me a joke", false},
		{"你知道红楼梦的作者是谁吗", "红楼梦的作者是谁吗", true},
	}
	for _, tt := range tests {
		rest, stripped := StripGreeting(tt.in)
		if rest != tt.rest || stripped != tt.stripped {
			t.Errorf("StripGreeting(%q) = %q, %v; want %q, %v", tt.in, rest, stripped, tt.rest, tt.stripped)
		}
	}
}

func TestAnalyzeCues(t *testing.T) {
	an := Analyze("对比一下洗牙和补牙的费用差异")
	for _, c := range []string{"cmp"} {
		if !slices.Contains(an.Cues, c) {
			t.Errorf("cues %v lack %q", an.Cues, c)
		}
	}
	if !an.Compare || !an.Substance {
		t.Errorf("analysis %+v", an)
	}
	if an := Analyze("are you a robot"); an.Substance {
		t.Errorf("a question about the assistant is not substantive: %+v", an)
	}
	if an := Analyze("Is the cafeteria open on weekends"); !an.Substance {
		t.Errorf("yes/no question not substantive: %+v", an)
	}
}

func TestModelRoundTrip(t *testing.T) {
	m := &Model{Buckets: 8, Temperature: 1.5, ChitchatMargin: 0.5, SubstanceMargin: 2, TalkPrecision: 0.99, W: make([]float32, 8*K)}
	for i := range m.W {
		m.W[i] = float32(i%7) - 3.25
	}
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.Buckets != m.Buckets || got.Temperature != m.Temperature || got.ChitchatMargin != m.ChitchatMargin ||
		got.SubstanceMargin != m.SubstanceMargin || got.TalkPrecision != m.TalkPrecision {
		t.Fatalf("header %+v", got)
	}
	for i := range m.W {
		if math.Abs(float64(got.W[i]-m.W[i])) > 3.25/32767+1e-6 {
			t.Fatalf("w[%d] = %v, want %v", i, got.W[i], m.W[i])
		}
	}
	// Flip one payload byte inside the gzip stream: either gzip or our CRC
	// must catch it.
	blob := buf.Bytes()
	for _, i := range []int{len(blob) / 2, 12} {
		bad := bytes.Clone(blob)
		bad[i] ^= 0x40
		if _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flip at %d: err = %v", i, err)
		}
	}
	if _, err := Decode([]byte("nope")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: %v", err)
	}
}

func TestSoftmax(t *testing.T) {
	p := Softmax([K]float32{1, 1, 1}, 0)
	for _, v := range p {
		if math.Abs(v-1.0/3) > 1e-12 {
			t.Fatalf("%v", p)
		}
	}
	hot := Softmax([K]float32{4, 0, 0}, 1)
	cool := Softmax([K]float32{4, 0, 0}, 2)
	if !(hot[0] > cool[0] && cool[0] > 1.0/3) {
		t.Fatalf("temperature does not soften: %v %v", hot, cool)
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"你好，顺便问下电子发票多久能开好", "hi there! what's up", "ＡＢＣ？", "\xff\xfe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a Appender
		an := a.Query(s)
		if !utf8.ValidString(an.Norm) && utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 from valid input: %q", an.Norm)
		}
		if len(a.Buf) == 0 {
			t.Fatal("no features (the bias feature is always present)")
		}
		if Normalize(an.Norm) != an.Norm {
			t.Fatalf("Normalize not idempotent: %q -> %q", an.Norm, Normalize(an.Norm))
		}
	})
}
