package plan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// latinWordUnits is the weight of one Latin word when measuring a question's
// length. A Chinese word averages about one and a half characters, so an
// English question and its Chinese translation come out about the same size.
const latinWordUnits = 1.5

// finalParticles are Chinese sentence-final particles. They carry tone, not
// content, so they are not counted when a question's length is measured.
const finalParticles = "吗呢吧啊呀嘛哦啦"

// text is a question analysed once: normalised forms, its tokens and its
// length in content units. Every detector reads this instead of re-scanning.
type text struct {
	norm    string  // width-folded, lower-cased, valid UTF-8
	compact string  // norm without punctuation, spaces and control characters
	tokens  []token // CJK runs and Latin/digit words, in order
	words   []string
	units   float64 // content units (see measure)
	han     bool    // contains a CJK character
	latin   bool    // contains a Latin letter
}

// tokenKind tells a run of CJK characters from a Latin or digit word.
type tokenKind uint8

const (
	tokCJK tokenKind = iota
	tokWord
	tokNumber
)

type token struct {
	kind tokenKind
	s    string
}

// analyzeText normalises s and tokenises it. Invalid UTF-8 bytes are dropped.
func analyzeText(s string) text {
	t := text{norm: normalize(s)}
	t.compact = compact(t.norm)
	t.tokens = tokenize(t.norm)
	for _, tk := range t.tokens {
		switch tk.kind {
		case tokCJK:
			t.han = true
		case tokWord:
			t.latin = true
			t.words = append(t.words, tk.s)
		case tokNumber:
			t.words = append(t.words, tk.s)
		}
	}
	t.units = measure(t.tokens)
	return t
}

// empty reports a question with no letters or digits at all.
func (t *text) empty() bool { return len(t.tokens) == 0 }

// normalize folds full-width ASCII and the ideographic space to their ASCII
// forms and lower-cases, so that "ＶＰＮ" and "vpn" match the same keyword.
func normalize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\u3000':
			r = ' '
		case r >= '\uFF01' && r <= '\uFF5E':
			r -= 0xFEE0
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// compact drops punctuation, spaces and control characters from a normalised
// string. Symbols (+, ¥, emoji) are kept: they can change a question's meaning.
func compact(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// tokenize splits a normalised string into runs of CJK characters and words of
// Latin letters or digits. An apostrophe inside a word is kept ("how's").
func tokenize(s string) []token {
	var out []token
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isCJK(r):
			j := i
			for j < len(rs) && isCJK(rs[j]) {
				j++
			}
			out = append(out, token{tokCJK, string(rs[i:j])})
			i = j
		case unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || ((rs[j] == '.' || rs[j] == ',') && j+1 < len(rs) && unicode.IsDigit(rs[j+1]))) {
				j++
			}
			out = append(out, token{tokNumber, string(rs[i:j])})
			i = j
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && (isWordRune(rs[j]) || (rs[j] == '\'' && j+1 < len(rs) && isWordRune(rs[j+1]))) {
				j++
			}
			out = append(out, token{tokWord, string(rs[i:j])})
			i = j
		default:
			i++
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isCJK(r)
}

// measure counts content units: one per CJK character, one per number (a
// number is one token to a lexical index and one fact to the reader, however
// many digits it has), latinWordUnits per Latin word. Sentence-final particles
// at the end of the question are not counted.
func measure(tokens []token) float64 {
	var u float64
	for i, tk := range tokens {
		switch tk.kind {
		case tokCJK:
			s := tk.s
			if i == len(tokens)-1 {
				s = strings.TrimRight(s, finalParticles)
			}
			u += float64(utf8.RuneCountInString(s))
		case tokNumber:
			u++
		case tokWord:
			u += latinWordUnits
		}
	}
	return u
}

// language returns "zh" when the question contains a CJK character, "en" when
// it has Latin letters and no CJK, and def otherwise (digits only, empty).
func (t *text) language(def string) string {
	switch {
	case t.han:
		return langZH
	case t.latin:
		return langEN
	}
	return def
}

// ExactMatch reports whether a user question and an FAQ question are the same
// text after normalisation: full-width forms folded, lower-cased, punctuation
// and white space removed. Two questions that normalise to nothing never match.
// It is the "exact" argument that RetrievalPlan.FAQDirect expects.
func ExactMatch(question, faqQuestion string) bool {
	a := compact(normalize(question))
	return a != "" && a == compact(normalize(faqQuestion))
}
