package query

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Variants returns up to n phrasings of text for multi-query search, the
// original first and always kept. The offline variants are cheap
// rewordings that reach documents worded differently from the question:
//
//   - a keyword form without question scaffolding, identifiers first
//     ("P-208 warranty" for "How long is the warranty on the P-208?",
//     "P-204 电池 换货" for "P-204 电池能换货吗？");
//   - a form with Chinese numerals as digits ("30天" for "三十天").
//
// A form with the same words in another order is not a variant (Dedupe
// merges it), so there are at most three offline variants.
//
// Variants are passed through Dedupe, so none differs from another only in
// spacing or word order, and none loses an entity or number. n < 1 is read
// as 1.
func Variants(text string, n int) []string {
	if n < 1 {
		n = 1
	}
	out := []string{text}
	if n == 1 || strings.TrimSpace(text) == "" {
		return out
	}
	t := newText(text)
	toks := t.tokens()
	var ids []string
	for k := range t.spans {
		if t.spans[k].subject() {
			ids = append(ids, t.spans[k].value)
		}
	}
	rest := t.keywords(toks, 0, len(t.cs), func(s *span) bool { return s.subject() })
	out = append(out, strings.TrimSpace(strings.Join(ids, " ")+" "+rest))
	var edits []edit
	for k := range t.spans {
		s := &t.spans[k]
		if s.numeric() && s.nj > s.ni && isHan(t.at(s.ni)) {
			edits = append(edits, edit{s.ni, s.nj, strconv.FormatFloat(s.num, 'f', -1, 64)})
		}
	}
	if len(edits) > 0 {
		out = append(out, applyEdits(t, edits))
	}
	out = Dedupe(out)
	return out[:min(n, len(out))]
}

// Dedupe removes texts that repeat an earlier one: the same after folding
// width and case and dropping spaces and punctuation, or the same words in
// another order ("质量退货 P-204" repeats "P-204 质量退货"; a keyword form
// without the question's words does not). It never merges two texts that differ in an entity or a
// number ("P-204 质量退货" and "P-205 质量退货" both stay; so do 三十天 and
// 四十天), and it keeps the first of each group, in order. Empty texts are
// dropped.
func Dedupe(texts []string) []string {
	type key struct {
		compact string
		words   []string
		ents    []string
	}
	var keys []key
	out := make([]string, 0, len(texts))
	for _, s := range texts {
		if strings.TrimSpace(s) == "" {
			continue
		}
		t := newText(s)
		k := key{compact: compactKey(s)}
		for _, sp := range t.spans {
			k.ents = append(k.ents, sp.key)
		}
		sort.Strings(k.ents)
		k.ents = slices.Compact(k.ents)
		for _, tk := range t.tokens() {
			switch tk.kind {
			case tokWord:
				k.words = append(k.words, tk.low)
			case tokHan:
				k.words = append(k.words, t.folded(tk.i, tk.j))
			case tokSpan:
				k.words = append(k.words, t.spans[tk.span].key)
			}
		}
		sort.Strings(k.words)
		k.words = slices.Compact(k.words)
		dup := false
		for _, o := range keys {
			if slices.Equal(o.ents, k.ents) && (o.compact == k.compact || len(k.words) > 0 && slices.Equal(o.words, k.words) && digits(o.compact) == digits(k.compact)) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		keys = append(keys, k)
		out = append(out, s)
	}
	return out
}

// digits returns the sorted digits of s: word-order duplicates must carry
// the same digits, whether or not they were read as entities.
func digits(s string) string {
	var d []rune
	for _, r := range s {
		if isDigit(r) {
			d = append(d, r)
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return string(d)
}
