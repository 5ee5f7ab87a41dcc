// Package feat turns a query into hashed sparse features for the offline
// router model and reads and writes that model. It is shared by the router
// (inference) and router/internal/train (fitting), so both see exactly the
// same features.
package feat

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize lower-cases s, folds full-width forms to ASCII, turns
// punctuation and symbols into spaces and collapses white space. Casing and
// punctuation carry no signal the router may rely on (the judged traffic
// changes both), so features only ever see normalized text.
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := true // drop leading space
	for _, r := range s {
		switch {
		case r == 0x3000:
			r = ' '
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		}
		if r == '\'' || r == '’' { // keep contractions together: what's -> whats
			continue
		}
		if unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsSpace(r) || unicode.IsControl(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		space = false
	}
	out := strings.TrimRight(b.String(), " ")
	if strings.IndexFunc(out, isContractionStart) >= 0 {
		out = expandContractions(out)
	}
	return out
}

func isContractionStart(r rune) bool {
	return r == 'w' || r == 'i' || r == 'y' || r == 'd' || r == 'c' || r == 'h' || r == 't'
}

// contractions maps apostrophe-less contractions to their long forms, so
// "what's", "whats" and "what is" give the same features: the judged
// traffic drops or keeps apostrophes at random.
var contractions = map[string]string{
	"whats": "what is", "whos": "who is", "wheres": "where is", "whens": "when is", "hows": "how is",
	"whys": "why is", "thats": "that is", "theres": "there is", "im": "i am", "youre": "you are",
	"theyre": "they are", "dont": "do not", "doesnt": "does not", "didnt": "did not",
	"cant": "can not", "cannot": "can not", "wont": "will not", "isnt": "is not", "arent": "are not",
	"wasnt": "was not", "ive": "i have", "youve": "you have",
	"youll": "you will", "youd": "you would", "whatre": "what are", "howre": "how are",
}

func expandContractions(s string) string {
	words := strings.Split(s, " ")
	changed := false
	for i, w := range words {
		if long, ok := contractions[w]; ok && long != w {
			words[i] = long
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(words, " ")
}

// IsHan reports whether r is a CJK ideograph.
func IsHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// Token is a word (a run of letters/digits that are not Han) or a run of Han
// characters.
type Token struct {
	Text string
	Han  bool
}

// Tokenize splits normalized text into Latin words and Han runs.
func Tokenize(norm string) []Token {
	var toks []Token
	start, han := -1, false
	flush := func(end int) {
		if start >= 0 {
			toks = append(toks, Token{Text: norm[start:end], Han: han})
			start = -1
		}
	}
	for i, r := range norm {
		switch {
		case r == ' ':
			flush(i)
		case IsHan(r):
			if start >= 0 && !han {
				flush(i)
			}
			if start < 0 {
				start, han = i, true
			}
		default:
			if start >= 0 && han {
				flush(i)
			}
			if start < 0 {
				start, han = i, false
			}
		}
	}
	flush(len(norm))
	return toks
}

// Counts are simple size measures of a normalized query.
type Counts struct {
	Words int // Latin words
	Han   int // Han characters
}

// Size is the query length in "word units": Latin words plus Han
// characters divided by 1.6 (about the characters per Chinese word).
func (c Counts) Size() float64 { return float64(c.Words) + float64(c.Han)/1.6 }

// CountOf measures tokens.
func CountOf(toks []Token) Counts {
	var c Counts
	for _, t := range toks {
		if t.Han {
			c.Han += utf8.RuneCountInString(t.Text)
		} else {
			c.Words++
		}
	}
	return c
}

// hashing: FNV-1a, 32 bit.
const (
	offset32 = 2166136261
	prime32  = 16777619
)

func hstr(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= prime32
	}
	return h
}

// Hash hashes a namespaced feature name.
func Hash(ns, s string) uint32 { return hstr(hstr(offset32, ns), s) }

// Appender collects feature hashes; reuse one per goroutine to avoid
// allocations.
type Appender struct {
	Buf   []uint32
	runes []rune
}

func (a *Appender) add(ns, s string) { a.Buf = append(a.Buf, Hash(ns, s)) }

func (a *Appender) add2(ns, s1, s2 string) {
	h := hstr(hstr(offset32, ns), s1)
	h = hstr(h, " ")
	a.Buf = append(a.Buf, hstr(h, s2))
}

// Extract appends the feature hashes of a normalized query (toks must be
// Tokenize(norm)) plus the cue features in cues. Features are binary and may
// repeat (repeats count).
func (a *Appender) Extract(toks []Token, cues []string) {
	a.Buf = a.Buf[:0]
	a.add("bias", "")
	for _, c := range cues {
		a.add("cue", c)
	}
	c := CountOf(toks)
	a.add("len", lenBucket(c.Size()))
	if c.Han > c.Words {
		a.add("script", "han")
	} else {
		a.add("script", "latin")
	}
	var prevWord string
	firstWords := 0
	for i, t := range toks {
		if t.Han {
			a.runes = a.runes[:0]
			for _, r := range t.Text {
				a.runes = append(a.runes, r)
			}
			rs := a.runes
			for j := range rs {
				a.add("c1", string(rs[j]))
				if j+1 < len(rs) {
					a.add("c2", string(rs[j:j+2]))
				}
				if j+2 < len(rs) {
					a.add("c3", string(rs[j:j+3]))
				}
			}
			if i == 0 {
				a.add("hstart", string(rs[:min(2, len(rs))]))
				if len(rs) >= 3 {
					a.add("hstart3", string(rs[:3]))
				}
			}
			if i == len(toks)-1 {
				a.add("hend", string(rs[max(0, len(rs)-2):]))
				a.add("hend1", string(rs[len(rs)-1:]))
			}
			prevWord = ""
			continue
		}
		w := t.Text
		a.add("w", w)
		if prevWord != "" {
			a.add2("w2", prevWord, w)
		}
		if firstWords == 0 && i == 0 {
			a.add("first", w)
			if i+1 < len(toks) && !toks[i+1].Han {
				a.add2("first2", w, toks[i+1].Text)
			}
		}
		if i == len(toks)-1 {
			a.add("last", w)
		}
		firstWords++
		// Character trigrams of the padded word cover inflections and
		// unseen names.
		if len(w) >= 3 && isDigitFree(w) {
			p := "<" + w + ">"
			for j := 0; j+3 <= len(p); j++ {
				a.add("g3", p[j:j+3])
			}
		} else if !isDigitFree(w) {
			a.add("num", "")
		}
		prevWord = w
	}
}

func isDigitFree(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return false
		}
	}
	return true
}

func lenBucket(size float64) string {
	switch {
	case size <= 2:
		return "1-2"
	case size <= 4:
		return "3-4"
	case size <= 7:
		return "5-7"
	case size <= 11:
		return "8-11"
	case size <= 16:
		return "12-16"
	case size <= 24:
		return "17-24"
	}
	return "25+"
}

// Query analyzes text and extracts its features into a.Buf; the router and
// the trainer both go through it.
func (a *Appender) Query(text string) Analysis {
	an := Analyze(text)
	a.Extract(an.Toks, an.Cues)
	return an
}
