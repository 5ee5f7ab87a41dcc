package query

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// char is one rune of a text in its comparison form, with the byte offset of
// the rune in the original text. The form folds full-width ASCII and the
// ideographic space to ASCII and keeps case: values are reported as written.
type char struct {
	r   rune
	off int32
}

// fold maps full-width forms to ASCII (ＶＰＮ -> VPN, ？ -> ?, ％ -> %) and
// the ideographic space to a space.
func fold(r rune) rune {
	switch {
	case r == '\u3000':
		return ' '
	case r >= '\uFF01' && r <= '\uFF5E':
		return r - 0xFEE0
	case r == '\uFFE5':
		return '¥'
	}
	return r
}

func lower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

func isDigit(r rune) bool  { return r >= '0' && r <= '9' }
func isLetter(r rune) bool { return (r|0x20) >= 'a' && (r|0x20) <= 'z' }
func isUpper(r rune) bool  { return r >= 'A' && r <= 'Z' }
func isAlnum(r rune) bool  { return isDigit(r) || isLetter(r) }
func isHex(r rune) bool    { return isDigit(r) || ((r|0x20) >= 'a' && (r|0x20) <= 'f') }

// isHan reports a CJK ideograph (or kana/hangul): the runes Chinese text is
// written in and that have no word boundaries between them.
func isHan(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x4E00 && r <= 0x9FFF:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// phrase is a word-list entry with its runes decoded once.
type phrase struct {
	s string
	r []rune
}

func phrases(ss ...string) []phrase {
	out := make([]phrase, len(ss))
	for k, s := range ss {
		out[k] = phrase{s, []rune(s)}
	}
	return out
}

// hasRunes reports whether the lower-cased folded text at i starts with p.
func (t *text) hasRunes(i int, p []rune) bool {
	if i < 0 || i+len(p) > len(t.cs) {
		return false
	}
	for k, r := range p {
		if lower(t.cs[i+k].r) != r {
			return false
		}
	}
	return true
}

// endsWithRunes is endsWith for a decoded phrase.
func (t *text) endsWithRunes(j int, p []rune) bool {
	i := j - len(p)
	if i < 0 || len(p) == 0 || lower(t.cs[j-1].r) != p[len(p)-1] || !t.hasRunes(i, p) {
		return false
	}
	return !isLetter(p[0]) || !isAlnum(t.at(i-1))
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// isPunct reports sentence and clause punctuation after folding.
func isPunct(r rune) bool {
	switch r {
	case ',', '.', '?', '!', ';', ':', '、', '。', '…', '(', ')', '"', '\'', '“', '”', '‘', '’', '《', '》', '【', '】', '「', '」', '~':
		return true
	}
	return false
}

// isClauseEnd reports punctuation that ends a clause.
func isClauseEnd(r rune) bool {
	switch r {
	case ',', '.', '?', '!', ';', '、', '。', '\n':
		return true
	}
	return false
}

// text is a string scanned once: its folded runes with offsets and the
// entities found in it. Everything that reads a question or a history
// message works on a text.
type text struct {
	src   string
	cs    []char
	spans []span
	toks  []token // tokens, once computed
	han   bool    // has a CJK character
	voc   Vocabulary
}

func newText(s string) *text { return parse(s, nil) }

// parse scans s, with the names of v (nil: none) as entities.
func parse(s string, v Vocabulary) *text {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	t := &text{src: s, cs: make([]char, 0, utf8.RuneCountInString(s)), voc: v}
	for off, r := range s {
		f := fold(r)
		if !t.han && isHan(f) {
			t.han = true
		}
		t.cs = append(t.cs, char{f, int32(off)})
	}
	scanEntities(t)
	return t
}

// at returns the folded rune at i, 0 outside the text.
func (t *text) at(i int) rune {
	if i < 0 || i >= len(t.cs) {
		return 0
	}
	return t.cs[i].r
}

// off returns the byte offset of char i (len(src) at the end).
func (t *text) off(i int) int {
	if i >= len(t.cs) {
		return len(t.src)
	}
	if i < 0 {
		return 0
	}
	return int(t.cs[i].off)
}

// orig returns the original text of chars [i, j).
func (t *text) orig(i, j int) string { return t.src[t.off(i):t.off(j)] }

// folded returns the folded text of chars [i, j), runs of spaces collapsed.
func (t *text) folded(i, j int) string {
	var b strings.Builder
	b.Grow(t.off(j) - t.off(i))
	sp := false
	for k := i; k < j; k++ {
		r := t.cs[k].r
		if isSpace(r) {
			sp = true
			continue
		}
		if sp && b.Len() > 0 {
			b.WriteByte(' ')
		}
		sp = false
		b.WriteRune(r)
	}
	return b.String()
}

// hasAt reports whether the lower-cased folded text at i starts with p (which
// must be lower case).
func (t *text) hasAt(i int, p string) bool {
	k := i
	for _, r := range p {
		if k >= len(t.cs) || lower(t.cs[k].r) != r {
			return false
		}
		k++
	}
	return true
}

// wordAt reports whether the Latin phrase p (lower case, single spaces)
// occurs at i as whole words; it returns the char index after it.
func (t *text) wordAt(i int, p string) (int, bool) {
	if isAlnum(t.at(i - 1)) {
		return 0, false
	}
	k := i
	for _, r := range p {
		if r == ' ' {
			if !isSpace(t.at(k)) {
				return 0, false
			}
			for isSpace(t.at(k)) {
				k++
			}
			continue
		}
		if k >= len(t.cs) || lower(t.cs[k].r) != r {
			return 0, false
		}
		k++
	}
	if isAlnum(t.at(k)) {
		return 0, false
	}
	return k, true
}

// endsWith reports whether the lower-cased text ending at j (exclusive) ends
// with p; Latin phrases must start at a word boundary.
func (t *text) endsWith(j int, p string) bool {
	n := utf8.RuneCountInString(p)
	i := j - n
	if i < 0 || !t.hasAt(i, p) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(p)
	if isLetter(r) && isAlnum(t.at(i-1)) {
		return false
	}
	return true
}

// skipSpaces returns the first index at or after i that is not a space.
func (t *text) skipSpaces(i int) int {
	for i < len(t.cs) && isSpace(t.cs[i].r) {
		i++
	}
	return i
}

// backSpaces returns the index just after the last non-space char before j.
func (t *text) backSpaces(j int) int {
	for j > 0 && isSpace(t.cs[j-1].r) {
		j--
	}
	return j
}

// wordEnd returns the end of the ASCII letter run starting at i.
func (t *text) wordEnd(i int) int {
	for i < len(t.cs) && isLetter(t.cs[i].r) {
		i++
	}
	return i
}

// lowerWord returns the lower-cased folded text of [i, j).
func (t *text) lowerWord(i, j int) string {
	if i >= j {
		return ""
	}
	// Lower-case ASCII as written: a substring, no allocation.
	if s := t.src[t.off(i):t.off(j)]; len(s) == j-i {
		plain := true
		for k := 0; k < len(s); k++ {
			if c := s[k]; c >= 'A' && c <= 'Z' || c >= 0x80 {
				plain = false
				break
			}
		}
		if plain {
			return s
		}
	}
	var b strings.Builder
	b.Grow(j - i)
	for k := i; k < j; k++ {
		b.WriteRune(lower(t.cs[k].r))
	}
	return b.String()
}

// spanAt returns the index of the span covering char i, or -1.
func (t *text) spanAt(i int) int {
	for k := range t.spans {
		if t.spans[k].i <= i && i < t.spans[k].j {
			return k
		}
		if t.spans[k].i > i {
			break
		}
	}
	return -1
}

// compactKey is s folded, lower-cased, without spaces and punctuation: the
// form texts are compared in.
func compactKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		r = lower(fold(r))
		if isSpace(r) || isPunct(r) || unicode.IsPunct(r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// containsFold reports whether s contains sub, compared as compactKey forms.
func containsFold(s, sub string) bool {
	k := compactKey(sub)
	return k != "" && strings.Contains(compactKey(s), k)
}
