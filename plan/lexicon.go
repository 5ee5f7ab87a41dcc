package plan

import (
	"strings"
)

// Keyword syntax, shared by every keyword list in this package (Source
// keywords and the built-in cue lists):
//
//   - a keyword containing a CJK character matches as a substring of the
//     question with punctuation and spaces removed ("连不上" matches
//     "VPN 连不上了");
//   - any other keyword matches whole words, in sequence ("talk to a human");
//     a trailing "*" lets its last word match as a prefix ("reimburs*"
//     matches "reimbursement");
//   - matching is case- and width-insensitive.

// phrase is one compiled keyword.
type phrase struct {
	raw    string
	cjk    string   // set for CJK keywords: the compacted substring
	words  []string // set for word keywords
	prefix bool     // last word matches as a prefix
}

// matcher is a compiled keyword list. It is immutable once built.
type matcher []phrase

func compileKeywords(kws ...string) matcher {
	m := make(matcher, 0, len(kws))
	for _, kw := range kws {
		n := normalize(strings.TrimSpace(kw))
		prefix := strings.HasSuffix(n, "*")
		n = strings.TrimSuffix(n, "*")
		if strings.ContainsFunc(n, isCJK) {
			if c := compact(n); c != "" {
				m = append(m, phrase{raw: kw, cjk: c})
			}
			continue
		}
		var words []string
		for _, tk := range tokenize(n) {
			words = append(words, tk.s)
		}
		if len(words) > 0 {
			m = append(m, phrase{raw: kw, words: words, prefix: prefix})
		}
	}
	return m
}

// matchWords reports whether p's words occur in ws starting at i.
func (p *phrase) matchWords(ws []string, i int) bool {
	if i+len(p.words) > len(ws) {
		return false
	}
	last := len(p.words) - 1
	for j, w := range p.words {
		if j == last && p.prefix {
			if !strings.HasPrefix(ws[i+j], w) {
				return false
			}
			continue
		}
		if ws[i+j] != w {
			return false
		}
	}
	return true
}

// in reports whether p occurs anywhere in t.
func (p *phrase) in(t *text) bool {
	if p.cjk != "" {
		return strings.Contains(t.compact, p.cjk)
	}
	for i := range t.words {
		if p.matchWords(t.words, i) {
			return true
		}
	}
	return false
}

// leads reports whether t begins with p.
func (p *phrase) leads(t *text) bool {
	if p.cjk != "" {
		return strings.HasPrefix(t.compact, p.cjk)
	}
	return len(t.tokens) > 0 && t.tokens[0].kind != tokCJK && p.matchWords(t.words, 0)
}

// first returns the first keyword (in list order) that occurs in t, or "".
func (m matcher) first(t *text) string {
	for i := range m {
		if m[i].in(t) {
			return m[i].raw
		}
	}
	return ""
}

// all returns every keyword of m that occurs in t, in list order.
func (m matcher) all(t *text) []string {
	var out []string
	for i := range m {
		if m[i].in(t) {
			out = append(out, m[i].raw)
		}
	}
	return out
}

// leading returns the first keyword that t begins with, or "".
func (m matcher) leading(t *text) string {
	for i := range m {
		if m[i].leads(t) {
			return m[i].raw
		}
	}
	return ""
}
