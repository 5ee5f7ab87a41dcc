package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unicode is a Tokenizer that cuts text into maximal runs of word runes
// (letters, digits and combining marks outside the CJK scripts) and maximal
// runs of CJK runes (Han, Hiragana, Katakana, Hangul). Every other rune,
// including bytes that are not valid UTF-8, separates tokens. A change of
// class also separates tokens, so "iPhone手机" gives "iPhone" and "手机".
// Full-width Latin letters and digits are word runes.
type Unicode struct{}

type class uint8

const (
	sep class = iota
	word
	cjk
)

// asciiClass classifies the bytes below utf8.RuneSelf.
var asciiClass = func() (t [utf8.RuneSelf]class) {
	for c := '0'; c <= '9'; c++ {
		t[c] = word
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = word, word
	}
	return t
}()

func runeClass(r rune, size int) class {
	if r == utf8.RuneError && size <= 1 {
		return sep // invalid byte
	}
	if isCJK(r) {
		return cjk
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
		return word
	}
	return sep
}

// isCJK reports whether r belongs to the scripts that are written without
// spaces and are therefore bigrammed. The iteration and prolonged-sound
// marks (々, ー) are in the Common script but belong inside CJK words.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x3041 && r <= 0x30FF && r != 0x30FB && r != 0x30A0:
		return true // the common blocks: CJK ideographs, Hangul syllables, kana
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		r == 0x3005 || r == 0x30FC || r == 0xFF70
}

// Tokenize implements Tokenizer.
func (Unicode) Tokenize(dst []Token, text string) []Token {
	start, cur := 0, sep
	for i := 0; i < len(text); {
		var c class
		size := 1
		if b := text[i]; b < utf8.RuneSelf {
			c = asciiClass[b]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			c = runeClass(r, size)
		}
		if c != cur {
			if cur != sep {
				dst = append(dst, Token{Term: text[start:i], Start: start, End: i, Kind: kindOf(cur)})
			}
			start, cur = i, c
		}
		i += size
	}
	if cur != sep {
		dst = append(dst, Token{Term: text[start:], Start: start, End: len(text), Kind: kindOf(cur)})
	}
	return dst
}

func kindOf(c class) Kind {
	if c == cjk {
		return CJK
	}
	return Word
}

// Width is a Filter that folds the full-width forms of ASCII (U+FF01 to
// U+FF5E) to ASCII, the part of NFKC width folding that matters for
// search: "ＰＤＦ２" matches "PDF2".
type Width struct{}

// Filter implements Filter.
func (Width) Filter(tokens []Token) []Token {
	for i := range tokens {
		t := &tokens[i]
		if t.Kind != Word || !hasFullWidth(t.Term) {
			continue
		}
		t.Term = strings.Map(func(r rune) rune {
			if r >= 0xFF01 && r <= 0xFF5E {
				return r - 0xFEE0
			}
			return r
		}, t.Term)
	}
	return tokens
}

// hasFullWidth reports whether s may contain a full-width ASCII form; all of
// them are encoded as EF BC xx or EF BD xx.
func hasFullWidth(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0xEF && (s[i+1] == 0xBC || s[i+1] == 0xBD) {
			return true
		}
	}
	return false
}

// Lower is a Filter that lower-cases Word tokens. Tokens that are already
// lower case are left as they are, without allocating.
type Lower struct{}

// Filter implements Filter.
func (Lower) Filter(tokens []Token) []Token {
	for i := range tokens {
		t := &tokens[i]
		if t.Kind == Word {
			t.Term = lower(t.Term)
		}
	}
	return tokens
}

func lower(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(s) // returns s itself when nothing changes
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if !upper {
		return s
	}
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// CJKBigram is a Filter that replaces each CJK run by its character
// unigrams and overlapping bigrams, in text order: "一二三" gives 一, 一二,
// 二, 二三, 三. A single-character run gives its unigram. Word tokens pass
// through unchanged. Unigrams let one-character queries match; bigrams
// reward the right character order, which approximates words without a
// dictionary.
type CJKBigram struct{}

// Filter implements Filter.
func (CJKBigram) Filter(tokens []Token) []Token {
	n := 0
	for _, t := range tokens {
		if t.Kind == CJK {
			if c := utf8.RuneCountInString(t.Term); c > 1 {
				n += 2*c - 1
				continue
			}
		}
		n++
	}
	if n == len(tokens) {
		return tokens
	}
	var out []Token
	if cap(tokens) >= n {
		// Expand in place from the back: the outputs of token i start at
		// index >= i, so no unread token is overwritten.
		out = tokens[:n]
	} else {
		out = make([]Token, n)
	}
	w := n
	for i := len(tokens) - 1; i >= 0; i-- {
		t := tokens[i]
		if t.Kind != CJK || utf8.RuneCountInString(t.Term) < 2 {
			w--
			out[w] = t
			continue
		}
		w = expandCJK(out, w, t)
	}
	return out
}

// expandCJK writes the unigrams and bigrams of t backwards into out ending
// before index w and returns the new start index.
func expandCJK(out []Token, w int, t Token) int {
	s := t.Term
	// Offsets are exact only while the term still is the input span.
	exact := len(s) == t.End-t.Start
	span := func(a, b int) (int, int) {
		if exact {
			return t.Start + a, t.Start + b
		}
		return t.Start, t.End
	}
	end := len(s)
	_, last := utf8.DecodeLastRuneInString(s)
	// cur is the rune [curStart, end); walk backwards.
	curStart := end - last
	{
		a, b := span(curStart, end)
		w--
		out[w] = Token{Term: s[curStart:end], Start: a, End: b, Kind: CJK}
	}
	for curStart > 0 {
		_, size := utf8.DecodeLastRuneInString(s[:curStart])
		prevStart := curStart - size
		a, b := span(prevStart, end)
		w--
		out[w] = Token{Term: s[prevStart:end], Start: a, End: b, Kind: CJK}
		a, b = span(prevStart, curStart)
		w--
		out[w] = Token{Term: s[prevStart:curStart], Start: a, End: b, Kind: CJK}
		end, curStart = curStart, prevStart
	}
	return w
}
