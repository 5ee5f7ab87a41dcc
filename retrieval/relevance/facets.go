package relevance

import (
	"strings"
	"unicode"
)

// A question that joins or contrasts subjects ("Compare annual leave and
// sick leave", "差旅报销和招待报销有什么区别", "a lost laptop versus a
// forgotten password") is answered by passages that each cover one side.
// Judged against the whole question such a passage covers half its words
// and looks irrelevant, so the relevance of a hit is the best of the whole
// question and of each side ("facet") with enough content of its own.

// facetCues are the words that join or contrast subjects, English ones
// matched as whole words without case.
var (
	facetCuesEN = []string{"and", "or", "versus", "vs", "vs.", "compared with", "compared to",
		"differ from", "differs from", "different from", "as opposed to", "against", "with"}
	facetCuesZH = []string{"以及", "还是", "相比", "对比", "和", "与", "跟", "及", "、"}
)

// minFacetContent is the content a facet needs to be judged on its own: a
// side with one word ("exchanging it") matches any passage with that word.
const (
	minFacetWords = 2 // English content words
	minFacetHan   = 3 // Chinese characters outside function characters
)

// comparisonMarks say that a question compares or contrasts: only such a
// question is cut into sides. A plain question that joins two things ("退
// 货和换货要带什么材料") asks for a passage about both.
var (
	comparisonMarksEN = []string{"compare", "comparison", "compared", "difference", "differences", "differ",
		"differs", "different", "differently", "versus", "vs", "vs.", "contrast", "as opposed to"}
	comparisonMarksZH = []string{"区别", "差异", "不同", "对比", "相比", "比较", "异同", "还是"}
)

// compares reports whether query carries a comparison mark.
func compares(query string) bool {
	for _, m := range comparisonMarksZH {
		if strings.Contains(query, m) {
			return true
		}
	}
	for _, m := range comparisonMarksEN {
		if indexWordFold(query, m, 0) >= 0 {
			return true
		}
	}
	return false
}

// indexWordFold returns the index of the first occurrence at or after from
// of the ASCII phrase w in s that stands as whole words, without regard to
// case, or -1. It allocates nothing: every query is checked.
func indexWordFold(s, w string, from int) int {
	for i := indexFold(s, w, from); i >= 0; i = indexFold(s, w, i+1) {
		if boundary(s, i-1) && boundary(s, i+len(w)) {
			return i
		}
	}
	return -1
}

// indexFold returns the index of the first occurrence at or after from of
// the ASCII phrase w in s without regard to case, whole word or not, or
// -1. A byte that differs from w's first letter is passed over without
// the cost of strings.EqualFold: w starts with a letter, and a span of
// len(w) bytes holding a non-ASCII rune has fewer runes than w, so it
// never equals it under folding.
func indexFold(s, w string, from int) int {
	w0 := w[0] | 0x20
	for i := from; i+len(w) <= len(s); i++ {
		if s[i]|0x20 != w0 {
			continue
		}
		if strings.EqualFold(s[i:i+len(w)], w) {
			return i
		}
	}
	return -1
}

// facets returns the sides of a comparing query that have enough content
// to be judged alone, or nil when query compares nothing. The sides are
// cut at the cues; each keeps its own words only.
func facets(query string) []string {
	if !compares(query) {
		return nil
	}
	parts := []string{query}
	for _, cue := range facetCuesZH {
		if strings.Contains(query, cue) { // else no part holds it: nothing to allocate
			parts = splitAll(parts, func(s string) []string { return splitHan(s, cue) })
		}
	}
	for _, cue := range facetCuesEN {
		if indexFold(query, cue, 0) >= 0 {
			parts = splitAll(parts, func(s string) []string { return splitWord(s, cue) })
		}
	}
	if len(parts) < 2 {
		return nil
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); hasContent(p) {
			out = append(out, p)
		}
	}
	return out
}

func splitAll(parts []string, split func(string) []string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, split(p)...)
	}
	return out
}

// facetWordsZH are words that hold a cue character without joining
// subjects (参与, 涉及, 及时): no cut inside them.
var facetWordsZH = []string{"参与", "与会", "涉及", "及时", "及早", "普及", "危及", "来不及", "以及",
	"跟进", "跟踪", "跟随", "和解", "总和", "缓和", "和谐", "暖和", "对比度", "相比较"}

// splitHan cuts s at every occurrence of cue that is not inside one of
// facetWordsZH.
func splitHan(s, cue string) []string {
	var out []string
	start := 0
	for i := 0; ; {
		j := strings.Index(s[i:], cue)
		if j < 0 {
			break
		}
		j += i
		i = j + len(cue)
		if !insideWord(s, j, cue) {
			out = append(out, s[start:j])
			start = i
		}
	}
	return append(out, s[start:])
}

// insideWord reports whether the cue at byte j of s belongs to one of
// facetWordsZH.
func insideWord(s string, j int, cue string) bool {
	for _, w := range facetWordsZH {
		k := strings.Index(w, cue)
		if k < 0 || w == cue {
			continue
		}
		if j-k >= 0 && strings.HasPrefix(s[j-k:], w) {
			return true
		}
	}
	return false
}

// splitWord cuts s at every occurrence of the ASCII phrase cue that stands
// as whole words, without regard to case.
func splitWord(s, cue string) []string {
	var out []string
	start := 0
	for i := indexWordFold(s, cue, 0); i >= 0; i = indexWordFold(s, cue, start) {
		out = append(out, s[start:i])
		start = i + len(cue)
	}
	return append(out, s[start:])
}

// boundary reports whether s has no letter or digit at byte i (or i is
// outside s).
func boundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	c := rune(s[i])
	return c < 0x80 && !unicode.IsLetter(c) && !unicode.IsDigit(c)
}

var (
	facetStopEN = map[string]bool{
		"a": true, "an": true, "the": true, "of": true, "for": true, "in": true, "on": true, "to": true,
		"is": true, "are": true, "do": true, "does": true, "what": true, "how": true, "why": true,
		"which": true, "who": true, "i": true, "my": true, "it": true, "its": true, "between": true,
		"difference": true, "differences": true, "compare": true, "should": true, "can": true,
		"with": true, "me": true, "we": true, "you": true, "they": true, "their": true, "this": true,
		"that": true, "there": true, "rules": true, "rule": true, "explain": true, "summarize": true,
	}
	facetStopHan = "的了吗呢吧啊是在有和与跟及对比一下什么怎么哪个区别差异不同有何"
)

// hasContent reports whether a facet has enough words of its own.
func hasContent(s string) bool {
	words, han := 0, 0
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		ascii := true
		for _, r := range w {
			if unicode.Is(unicode.Han, r) {
				ascii = false
				if !strings.ContainsRune(facetStopHan, r) {
					han++
				}
			}
		}
		if ascii && !facetStopEN[strings.ToLower(w)] {
			words++
		}
	}
	return words >= minFacetWords || han >= minFacetHan
}
