package ingest

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkSpans verifies the splitter's invariants on text and returns the
// chunks: every span is on rune boundaries and at most size runes, spans
// are ordered, consecutive spans overlap by at most overlap runes, and
// together they cover every non-space rune of text.
func checkSpans(t *testing.T, s Splitter, text string) []string {
	t.Helper()
	size, overlap := s.sizes()
	spans := s.spans(text)
	covered := 0 // text[:covered] is covered
	for i, sp := range spans {
		if sp.start < 0 || sp.end > len(text) || sp.start >= sp.end {
			t.Fatalf("span %d = %v out of range or empty (len %d)", i, sp, len(text))
		}
		if utf8.ValidString(text) && (!utf8.ValidString(text[sp.start:sp.end])) {
			t.Fatalf("span %d cuts inside a rune: %q", i, text[sp.start:sp.end])
		}
		if n := utf8.RuneCountInString(text[sp.start:sp.end]); n > size {
			t.Fatalf("span %d has %d runes, more than %d", i, n, size)
		}
		if gap := text[covered:max(covered, sp.start)]; strings.TrimSpace(gap) != "" {
			t.Fatalf("text %q between spans %d and %d is in no chunk", gap, i-1, i)
		}
		if i > 0 {
			prev := spans[i-1]
			if sp.start < prev.start || sp.end <= prev.end {
				t.Fatalf("span %d = %v does not advance past %v", i, sp, prev)
			}
			if sp.start < prev.end {
				if n := utf8.RuneCountInString(text[sp.start:prev.end]); n > overlap {
					t.Fatalf("spans %d and %d overlap by %d runes, more than %d", i-1, i, n, overlap)
				}
			}
		}
		covered = max(covered, sp.end)
	}
	if rest := text[covered:]; strings.TrimSpace(rest) != "" {
		t.Fatalf("tail %q is in no chunk", rest)
	}
	chunks := s.Split(text)
	for _, c := range chunks {
		if c == "" || strings.TrimSpace(c) != c {
			t.Fatalf("chunk %q is empty or untrimmed", c)
		}
	}
	return chunks
}

func TestSplitterInvariants(t *testing.T) {
	zh := strings.Repeat("员工出差前必须提交出差申请，由直属上级审批。住宿费在标准内据实报销！超标怎么办？须事前批准；否则自理。", 20)
	en := strings.Repeat("Claims above 5,000 yuan need the finance director. Submit within 30 days! Late claims? They need a signature; otherwise rejected. ", 20)
	tests := []struct {
		name string
		s    Splitter
		text string
	}{
		{"zh default", Splitter{}, zh},
		{"en default", Splitter{}, en},
		{"mixed small", Splitter{ChunkSize: 60, Overlap: 15}, zh[:600] + "\n\n" + en[:900]},
		{"no separators", Splitter{ChunkSize: 50, Overlap: 10}, strings.Repeat("无标点的长文本", 40)},
		{"one long word", Splitter{ChunkSize: 20, Overlap: 5}, strings.Repeat("x", 95)},
		{"no overlap", Splitter{ChunkSize: 40, Overlap: -1}, en[:500]},
		{"overlap clamped", Splitter{ChunkSize: 30, Overlap: 300}, zh[:400]},
		{"paragraphs", Splitter{ChunkSize: 80}, "第一段。\n\n\n\n第二段很短。\n\n" + zh[:300]},
		{"emoji", Splitter{ChunkSize: 7, Overlap: 2}, strings.Repeat("👍🏽é", 30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := checkSpans(t, tt.s, tt.text)
			if len(chunks) < 2 {
				t.Fatalf("%d chunks for a text longer than the chunk size", len(chunks))
			}
		})
	}
}

func TestSplitterEmpty(t *testing.T) {
	for _, text := range []string{"", "  \n\n\t "} {
		if got := (Splitter{}).Split(text); got != nil {
			t.Errorf("Split(%q) = %q, want nil", text, got)
		}
	}
	if got := (Splitter{}).Split(" 短文本。 "); len(got) != 1 || got[0] != "短文本。" {
		t.Errorf("short text: %q", got)
	}
}

func TestSplitterCutsAtCJKSentenceEnds(t *testing.T) {
	sentences := []string{"退货须在签收后七天内发起。", "质量问题可延长到十五天！", "运费由谁承担？", "质量问题由公司承担；", "无理由退货由客户承担。"}
	text := strings.Join(sentences, "")
	// Room for about two sentences a chunk, no overlap: every chunk must
	// end at a sentence end, not mid-sentence.
	chunks := checkSpans(t, Splitter{ChunkSize: 28, Overlap: -1}, text)
	for _, c := range chunks {
		last, _ := utf8.DecodeLastRuneInString(c)
		if !strings.ContainsRune("。！？；", last) {
			t.Errorf("chunk %q does not end at a sentence end", c)
		}
	}
	if strings.Join(chunks, "") != text {
		t.Errorf("chunks %q do not reassemble the text", chunks)
	}
}

func TestSplitterPrefersParagraphs(t *testing.T) {
	p1 := strings.Repeat("甲", 30) + "。"
	p2 := strings.Repeat("乙", 30) + "。"
	chunks := checkSpans(t, Splitter{ChunkSize: 40, Overlap: -1}, p1+"\n\n"+p2)
	if len(chunks) != 2 || chunks[0] != p1 || chunks[1] != p2 {
		t.Errorf("chunks = %q, want the two paragraphs", chunks)
	}
}

func TestSplitterOverlapIsWholeSentences(t *testing.T) {
	var b strings.Builder
	for i := range 12 {
		b.WriteString("Sentence number ")
		b.WriteString(strings.Repeat("x", i%3+1))
		b.WriteString(" ends here. ")
	}
	chunks := checkSpans(t, Splitter{ChunkSize: 100, Overlap: 40}, b.String())
	for i := 1; i < len(chunks); i++ {
		if !strings.HasPrefix(chunks[i], "Sentence number") {
			t.Errorf("chunk %d starts mid-sentence: %q", i, chunks[i])
		}
		// The first sentence of a chunk repeats the end of the previous one.
		first := chunks[i][:strings.Index(chunks[i], ".")+1]
		if !strings.HasSuffix(chunks[i-1], first) {
			t.Errorf("chunk %d does not start with the tail of chunk %d:\n%q\n%q", i, i-1, chunks[i-1], chunks[i])
		}
	}
}

func TestSplitterOverlapDoesNotCutWords(t *testing.T) {
	// One long sentence: the overlap falls inside it and must start on a word.
	text := strings.Repeat("alpha beta gamma delta epsilon ", 12)
	words := map[string]bool{"alpha": true, "beta": true, "gamma": true, "delta": true, "epsilon": true}
	chunks := checkSpans(t, Splitter{ChunkSize: 50, Overlap: 20}, text)
	for _, c := range chunks {
		for _, w := range strings.Fields(c) {
			if !words[w] {
				t.Errorf("chunk %q holds the cut word %q", c, w)
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("退货须在签收后七天内发起。质量问题可延长到十五天！", 10, 3)
	f.Add("Hello world. This is a test!\n\nNew paragraph; more text, here.", 12, 4)
	f.Add("\xff\xfe broken \xe4\xb8 utf8。", 3, 1)
	f.Add("", 0, 0)
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		s := Splitter{ChunkSize: size%200 + 1, Overlap: overlap % 50}
		if size < 0 {
			s.ChunkSize = 0 // the default
		}
		chunks := checkSpans(t, s, text)
		if utf8.ValidString(text) {
			for _, c := range chunks {
				if !utf8.ValidString(c) {
					t.Fatalf("invalid UTF-8 chunk %q", c)
				}
			}
		}
		if strings.IndexFunc(text, func(r rune) bool { return !unicode.IsSpace(r) }) >= 0 && len(chunks) == 0 {
			t.Fatalf("no chunk for non-blank text %q", text)
		}
	})
}
