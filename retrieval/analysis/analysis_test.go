package analysis

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestDefaultTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"separators only", " ,.!? \t\n", nil},
		{"english", "How do I reset my Password?", []string{"how", "do", "i", "reset", "my", "password"}},
		{"numbers kept", "Limit is 5000 USD, v2.1", []string{"limit", "is", "5000", "usd", "v2", "1"}},
		{"apostrophe and hyphen split", "don't Wi-Fi", []string{"don", "t", "wi", "fi"}},
		{"underscore separates", "snake_case", []string{"snake", "case"}},
		{"unicode lower", "ÉCOLE Straße ΣΟΦΙΑ", []string{"école", "straße", "σοφια"}},
		{"combining mark stays in word", "cafe\u0301 ok", []string{"cafe\u0301", "ok"}},
		{"single han", "我", []string{"我"}},
		{"han run", "一二三", []string{"一", "一二", "二", "二三", "三"}},
		{"han punctuation breaks bigrams", "你好，世界", []string{"你", "你好", "好", "世", "世界", "界"}},
		{"mixed scripts", "iPhone手机5000元", []string{"iphone", "手", "手机", "机", "5000", "元"}},
		{"full width folded", "ＰＤＦ２ 下载", []string{"pdf2", "下", "下载", "载"}},
		{"full width punctuation separates", "ａ！ｂ", []string{"a", "b"}},
		{"ideographic space", "东京\u3000大阪", []string{"东", "东京", "京", "大", "大阪", "阪"}},
		{"hiragana katakana", "すしコーヒー", []string{"す", "すし", "し", "しコ", "コ", "コー", "ー", "ーヒ", "ヒ", "ヒー", "ー"}},
		{"hangul", "안녕하", []string{"안", "안녕", "녕", "녕하", "하"}},
		{"invalid utf8 separates", "ab\xffcd\xe4\xb8", []string{"ab", "cd"}},
		{"invalid inside han run", "中\xff文", []string{"中", "文"}},
		{"emoji separates", "go🙂lang", []string{"go", "lang"}},
	}
	an := Default()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := an.Tokens(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tokens(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAnalyzeOffsets(t *testing.T) {
	in := "Go语言 ＡＢ"
	got := newDefault().Analyze(in)
	want := []Token{
		{"go", 0, 2, Word},
		{"语", 2, 5, CJK},
		{"语言", 2, 8, CJK},
		{"言", 5, 8, CJK},
		{"ab", 9, 15, Word}, // folded term, span of the full-width input
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Analyze(%q)\n got %+v\nwant %+v", in, got, want)
	}
}

func TestPipelineZeroValue(t *testing.T) {
	got := Pipeline{}.Tokens("Hello 世界")
	want := []string{"Hello", "世界"} // no filters: case and runs kept
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestBigramAllocatesWhenNoCapacity(t *testing.T) {
	in := []Token{{Term: "一二", Start: 0, End: 6, Kind: CJK}, {Term: "x", Start: 7, End: 8}}
	in = in[:2:2]
	got := CJKBigram{}.Filter(in)
	want := []Token{{"一", 0, 3, CJK}, {"一二", 0, 6, CJK}, {"二", 3, 6, CJK}, {"x", 7, 8, Word}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if in[0].Term != "一二" {
		t.Fatalf("input modified: %+v", in)
	}
}

func TestWhitespace(t *testing.T) {
	if got := Whitespace().Tokens("  t1 T2\tt1 "); !slices.Equal(got, []string{"t1", "T2", "t1"}) {
		t.Fatalf("got %q", got)
	}
	if got := Whitespace().Tokens("   "); got != nil {
		t.Fatalf("got %q, want nil", got)
	}
}

func TestDefaultConcurrent(t *testing.T) {
	an := Default()
	in := "并发 Concurrent ＡＢＣ 测试"
	want := an.Tokens(in)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if got := an.Tokens(in); !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestASCIIAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	in := "the quick brown fox jumps over the lazy dog 2024"
	an := Default()
	allocs := testing.AllocsPerRun(100, func() { an.Tokens(in) })
	// The token buffer and the result slice; lower-case terms are substrings.
	if allocs > 2 {
		t.Fatalf("%v allocs per call, want <= 2", allocs)
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "Hello, 世界!", "ＡＢＣ１２３", "ab\xffcd\xe4\xb8", "すしコーヒー", "안녕하세요", "cafe\u0301", "\u3000\u3000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range newDefault().Analyze(s) {
			if tok.Term == "" || !utf8.ValidString(tok.Term) {
				t.Fatalf("bad term %q in %q", tok.Term, s)
			}
			if tok.Start < 0 || tok.End > len(s) || tok.Start >= tok.End {
				t.Fatalf("bad span [%d,%d) of %q in %q", tok.Start, tok.End, tok.Term, s)
			}
			if tok.Kind == CJK && tok.Term != s[tok.Start:tok.End] {
				t.Fatalf("CJK term %q is not its span %q", tok.Term, s[tok.Start:tok.End])
			}
			if tok.Kind == Word && strings.ToLower(tok.Term) != tok.Term && !hasFullWidth(tok.Term) {
				t.Fatalf("term %q not lower-cased", tok.Term)
			}
		}
	})
}

func BenchmarkDefault(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"en", strings.Repeat("Retrieval augmented generation adapts the strategy to each query. ", 4)},
		{"zh", strings.Repeat("自适应检索增强生成根据问题类型选择检索策略。", 4)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			an := Default()
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				an.Tokens(bc.text)
			}
		})
	}
}
