package query

import (
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tokWord  tokKind = iota // a Latin word (letters, inner ' and -)
	tokHan                  // a run of CJK characters
	tokSpan                 // an entity
	tokPunct                // clause punctuation
)

// token is a word, a CJK run, an entity or a punctuation mark of a text.
type token struct {
	kind tokKind
	i, j int
	low  string // lower-cased word (tokWord)
	span int    // index into text.spans (tokSpan)
}

// tokens splits t into tokens; entities are single tokens. The slice is
// computed once and shared: callers must not modify it.
func (t *text) tokens() []token {
	if t.toks == nil {
		t.toks = t.tokenize()
	}
	return t.toks
}

func (t *text) tokenize() []token {
	n := 2
	for k := 1; k < len(t.cs); k++ {
		if isHan(t.cs[k].r) != isHan(t.cs[k-1].r) || isSpace(t.cs[k].r) || isPunct(t.cs[k].r) {
			n++
		}
	}
	out := make([]token, 0, n)
	sk := 0
	for i := 0; i < len(t.cs); {
		for sk < len(t.spans) && t.spans[sk].j <= i {
			sk++
		}
		if sk < len(t.spans) && t.spans[sk].i == i {
			out = append(out, token{kind: tokSpan, i: i, j: t.spans[sk].j, span: sk})
			i = t.spans[sk].j
			continue
		}
		limit := len(t.cs)
		if sk < len(t.spans) {
			limit = t.spans[sk].i
		}
		r := t.cs[i].r
		switch {
		case isAlnum(r):
			j := i
			for j < limit && (isAlnum(t.cs[j].r) || (t.cs[j].r == '\'' || t.cs[j].r == '-' || t.cs[j].r == '’') && j+1 < limit && isLetter(t.cs[j+1].r)) {
				j++
			}
			out = append(out, token{kind: tokWord, i: i, j: j, low: strings.ReplaceAll(t.lowerWord(i, j), "’", "'")})
			i = j
		case isHan(r):
			j := i
			for j < limit && isHan(t.cs[j].r) {
				j++
			}
			out = append(out, token{kind: tokHan, i: i, j: j})
			i = j
		case isClauseEnd(r) || r == ':':
			out = append(out, token{kind: tokPunct, i: i, j: i + 1})
			i++
		default:
			i++
		}
	}
	return out
}

// ref is a referring expression found in a question.
type ref struct {
	i, j   int
	plural bool
	person bool
	det    bool // a determiner before a noun ("这个错误", "this policy")
	poss   bool
	which  bool // "which one", "哪个更…": stands for all candidates, listed after it
}

// whichFollowers follow 哪个 when it asks to choose among things said before
// ("哪个更便宜", "哪款好").
const whichFollowers = "更比最先好便贵划合适值推能可是的呢"

// refs finds the expressions of t that refer back to something said before:
// pronouns (它, it, they), possessives (它的, its), demonstratives used as
// pronouns or before a noun (这个, 这款, 该制度, this policy, that one).
// Demonstratives before an entity ("这个 P-205"), time words (这个月, this
// week: read as dates first), dummy "it" ("is it possible to", "does it
// take") and relative "that" ("a rule that covers") are not references.
func (t *text) refs(toks []token) []ref { return t.findRefs(toks, false) }

// comparesLater reports a comparative (更, 比较) in [a, b) within a few
// characters: "哪个充电更快" chooses among things said before, as "哪个更快"
// does, where "哪个部门负责" does not.
func (t *text) comparesLater(a, b int) bool {
	for p := a; p < b && p < a+6; p++ {
		if t.at(p) == '更' || t.hasAt(p, "比较") {
			return true
		}
	}
	return false
}

// findRefs finds the referring expressions of t; with inner it keeps those
// whose antecedent is in t itself (what Split needs to see a chain).
func (t *text) findRefs(toks []token, inner bool) []ref {
	var out []ref
	for k, tk := range toks {
		switch tk.kind {
		case tokHan:
			for p := tk.i; p < tk.j; {
				if t.at(p) == '哪' {
					for _, w := range []string{"哪一个", "哪一款", "哪个", "哪款", "哪台", "哪种", "哪家", "哪张", "哪份"} {
						if n := utf8.RuneCountInString(w); p+n <= tk.j && t.hasAt(p, w) && (p+n == tk.j || strings.ContainsRune(whichFollowers, t.at(p+n)) || t.comparesLater(p+n, tk.j)) {
							out = append(out, ref{i: p, j: p + n, plural: true, which: true})
							p += n - 1
							break
						}
					}
				}
				r, ok := t.hanRefAt(p, tk.j)
				if !ok {
					p++
					continue
				}
				n := utf8.RuneCountInString(r.s)
				e := p + n
				next := t.at(e)
				rf := ref{i: p, j: e, plural: r.plural, person: r.person, poss: r.poss}
				switch {
				case e == tk.j && k+1 < len(toks) && toks[k+1].kind == tokSpan && toks[k+1].i <= t.skipSpaces(e) &&
					(r.det || t.spans[toks[k+1].span].subject()):
					// 这个 P-205: a determiner of the entity that follows
					// (a pronoun before a time is still one: 它周末开门吗).
					p = e
					continue
				case r.det && e < tk.j && !strings.ContainsRune(pronounFollowers, next):
					rf.det = true
				}
				if r.s == "这" && (e >= tk.j || !strings.ContainsRune("能可是要会还也都该算适属", next)) {
					p = e
					continue
				}
				if inner || !t.antecedentBefore(toks, k, p, rf) {
					out = append(out, rf)
				}
				p = e
			}
		case tokWord:
			if (tk.low == "which" || tk.low == "either") && k+1 < len(toks) && toks[k+1].kind == tokWord {
				switch n := toks[k+1].low; {
				case n == "one" || n == "ones":
					out = append(out, ref{i: tk.i, j: toks[k+1].j, plural: true, which: true})
				case n == "of" && k+2 < len(toks) && toks[k+2].kind == tokWord && (toks[k+2].low == "them" || toks[k+2].low == "these" || toks[k+2].low == "those" || toks[k+2].low == "the"):
					e := toks[k+2].j
					if toks[k+2].low == "the" && k+3 < len(toks) && toks[k+3].kind == tokWord && (toks[k+3].low == "two" || toks[k+3].low == "three") {
						e = toks[k+3].j
					}
					out = append(out, ref{i: tk.i, j: e, plural: true, which: true})
				}
				continue
			}
			info, ok := latinRefs[tk.low]
			if !ok {
				continue
			}
			prev, next, next2 := "", "", ""
			if k > 0 && toks[k-1].kind == tokWord {
				prev = toks[k-1].low
			}
			nextTok := -1
			if k+1 < len(toks) {
				nextTok = k + 1
				if toks[k+1].kind == tokWord {
					next = toks[k+1].low
				}
			}
			if k+2 < len(toks) && toks[k+2].kind == tokWord {
				next2 = toks[k+2].low
			}
			end := nextTok < 0 || toks[nextTok].kind == tokPunct
			rf := ref{i: tk.i, j: tk.j, plural: info.plural, person: info.person}
			switch tk.low {
			case "it":
				if t.dummyIt(toks, k) {
					continue
				}
			case "its", "their":
				rf.poss = true
			case "this", "that", "these", "those":
				if next == "one" || next == "ones" {
					rf.j = toks[k+1].j
					break
				}
				if nextTok >= 0 && toks[nextTok].kind == tokSpan {
					continue // this P-205
				}
				if !end && !(k == 0 || toks[k-1].kind == tokPunct || governors[prev]) {
					continue // a relative "that"
				}
				if !end && next != "" && !auxWords[next] && !prepositions[next] && !latinVerb(next) && !whWords[next] && next != "and" && next != "or" {
					rf.det = true
				}
				if tk.low == "that" && (next == "is" || next == "was") && next2 != "" && (whWords[next2] || next2 == "the" || next2 == "a") {
					rf.det = false
				}
			case "both":
				if nextTok >= 0 && toks[nextTok].kind == tokSpan || next != "" && next != "of" && !auxWords[next] && !latinVerb(next) && !prepositions[next] {
					continue // both P-204 and P-205; both rivers
				}
			case "her":
				if next != "" && !auxWords[next] && !prepositions[next] {
					rf.poss = true
				}
			}
			if inner || !t.antecedentBefore(toks, k, tk.i, rf) {
				out = append(out, rf)
			}
		}
	}
	return out
}

// subordinators introduce a clause whose pronoun usually points back into
// the same question ("where does the blood go after it leaves ...").
var subordinators = map[string]bool{
	"before": true, "after": true, "when": true, "while": true, "because": true, "since": true, "until": true, "once": true,
	"as": true, "if": true, "where": true, "whenever": true, "although": true, "though": true, "whether": true,
}

// antecedentBefore reports a pronoun whose antecedent is in the question
// itself: the question says enough before it ("为什么哈佛终止了它的…",
// "what was guantanamo bay before it was a prison", "Randy Savage …
// after he left"). A follow-up states its referent elsewhere and leads
// with the pronoun ("它能换吗", "Can I return it?", "Which sections of it").
func (t *text) antecedentBefore(toks []token, k, at int, rf ref) bool {
	if rf.which {
		return false
	}
	han, words := 0, 0
	for n := 0; n <= k && n < len(toks); n++ {
		tk := toks[n]
		if tk.i >= at {
			break
		}
		switch tk.kind {
		case tokSpan:
			if t.spans[tk.span].subject() {
				words++
			}
		case tokWord:
			if _, isRef := latinRefs[tk.low]; isRef || stopWords[tk.low] || len(tk.low) < 2 {
				continue
			}
			if !latinVerb(tk.low) || n > 0 && toks[n-1].kind == tokWord && determiners[toks[n-1].low] {
				words++
			}
		case tokHan:
			t.hanContent(tk.i, min(tk.j, at), func(a, b int) { han += t.hanTopic(a, b) })
		}
	}
	if rf.person {
		return han >= 2 || words >= 1
	}
	sub := false
	if k > 0 && toks[k-1].kind == tokWord && subordinators[toks[k-1].low] {
		sub = true
	}
	return han >= 2 || words >= 2 || sub && words >= 1
}

// hanRefAt returns the referring expression at p, if one starts there.
func (t *text) hanRefAt(p, limit int) (hanRef, bool) {
	for _, r := range hanRefs[t.at(p)] {
		n := utf8.RuneCountInString(r.s)
		if p+n > limit || !t.hasAt(p, r.s) {
			continue
		}
		if t.spanAt(p) >= 0 {
			return hanRef{}, false
		}
		if ex, ok := notRefAfter[r.s]; ok && ex != "" && strings.ContainsRune(ex, t.at(p+n)) {
			return hanRef{}, false
		}
		if ex, ok := notRefBefore[r.s]; ok && ex != "" && strings.ContainsRune(ex, t.at(p-1)) {
			return hanRef{}, false
		}
		return r, true
	}
	return hanRef{}, false
}

// dummyIt reports an "it" that refers to nothing: "is it possible to", "how
// long does it take", "it seems".
func (t *text) dummyIt(toks []token, k int) bool {
	for n := 1; n <= 3 && k+n < len(toks); n++ {
		nt := toks[k+n]
		if nt.kind != tokWord {
			break
		}
		if takeForms[nt.low] && !t.asksTime(toks) {
			return false // "how many people can it take": it is the thing
		}
		if dummyItWords[nt.low] {
			return true
		}
		if nt.low == "to" || nt.low == "that" {
			return n > 1 && (dummyItWords[toks[k+n-1].low])
		}
	}
	return false
}

// takeForms make "it" a dummy subject only in a question of time ("how
// long does it take", "it takes 3 days").
var takeForms = map[string]bool{"take": true, "takes": true, "took": true, "taking": true}

// asksTime reports a question of time: "long", "time" or a unit of time.
func (t *text) asksTime(toks []token) bool {
	for _, tk := range toks {
		if tk.kind != tokWord {
			continue
		}
		if tk.low == "long" || tk.low == "time" || tk.low == "while" {
			return true
		}
		if u, ok := latinUnits[tk.low]; ok && u.kind == Duration {
			return true
		}
	}
	for _, s := range t.spans {
		if s.kind == Duration {
			return true
		}
	}
	return false
}

// hanContent calls fn for each content segment of the CJK run [i, j):
// what remains once question words, particles, pronouns, modals and function
// words are removed. Compounds that start with such a character (有效期,
// 会议) are kept whole.
func (t *text) hanContent(i, j int, fn func(a, b int)) {
	start := -1
	flush := func(p int) {
		if start >= 0 && p > start {
			fn(start, p)
		}
		start = -1
	}
	for p := i; p < j; {
		if n := t.longestAt(hanProtected, p, j); n > 0 {
			if start < 0 {
				start = p
			}
			p += n
			continue
		}
		if _, ok := t.hanRefAt(p, j); ok {
			r, _ := t.hanRefAt(p, j)
			flush(p)
			p += utf8.RuneCountInString(r.s)
			continue
		}
		if n := t.longestAt(hanScaffold, p, j); n > 0 {
			flush(p)
			p += n
			continue
		}
		if start < 0 {
			start = p
		}
		p++
	}
	flush(j)
}

// longestAt returns the rune length of the longest phrase of m at p that
// ends by limit, or 0.
func (t *text) longestAt(m map[rune][]phrase, p, limit int) int {
	for _, s := range m[t.at(p)] {
		if n := len(s.r); p+n <= limit && t.hasRunes(p, s.r) {
			return n
		}
	}
	return 0
}

// topic measures the content of a question that is its own: CJK characters
// of content segments (verbs removed) of two characters or more, and English
// words that are neither scaffolding nor verbs (a word after a determiner
// counts: "a refund"). Subject entities count as topic; numbers and dates
// do not.
func (t *text) topic(toks []token) (han, words int, subject bool) {
	for k, tk := range toks {
		switch tk.kind {
		case tokSpan:
			if t.spans[tk.span].subject() {
				subject = true
			}
		case tokWord:
			if _, isRef := latinRefs[tk.low]; isRef || stopWords[tk.low] || measureWord(tk.low) {
				continue
			}
			if latinVerb(tk.low) {
				if k > 0 && toks[k-1].kind == tokWord && determiners[toks[k-1].low] && toks[k-1].low != "that" && toks[k-1].low != "this" {
					words++
				}
				continue
			}
			if len(tk.low) > 1 {
				words++
			}
		case tokHan:
			t.hanContent(tk.i, tk.j, func(a, b int) { han += t.hanTopic(a, b) })
		}
	}
	return han, words, subject
}

// timeUnits are the English units of time.
var timeUnits = map[string]bool{
	"day": true, "days": true, "hour": true, "hours": true, "week": true, "weeks": true, "month": true,
	"months": true, "year": true, "years": true, "minute": true, "minutes": true,
}

// measureWord names a unit, not a topic: "How many days?" asks about the
// topic before it.
func measureWord(w string) bool { return timeUnits[w] || w == "times" || w == "percent" }

// hanTopic measures a CJK content segment: 0 when it is only generic verbs
// ("退", "处理完") or a two-character verb phrase ("退货", "开好"), else its
// length.
func (t *text) hanTopic(a, b int) int {
	if b-a >= 2 && t.hasAnyHan(a, b, hanNouns) != "" {
		return b - a
	}
	covered := true
	for p := a; p < b; {
		v := t.longestAt(hanVerbs, p, b)
		if v == 0 {
			covered = false
			break
		}
		p += v
	}
	switch {
	case covered, b-a < 2:
		return 0
	case b-a == 2 && t.longestAt(hanVerbs, a, b) > 0:
		return 0
	}
	return b - a
}

// keywords returns the content of [i, j) of t as space-separated terms:
// entities as written, English words that are not scaffolding, CJK content
// segments. skip, when not nil, drops entities.
func (t *text) keywords(toks []token, i, j int, skip func(*span) bool) string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	for _, tk := range toks {
		if tk.j <= i || tk.i >= j {
			continue
		}
		switch tk.kind {
		case tokSpan:
			if skip == nil || !skip(&t.spans[tk.span]) {
				add(t.spans[tk.span].value)
			}
		case tokWord:
			if !stopWords[tk.low] {
				add(t.folded(tk.i, tk.j))
			}
		case tokHan:
			t.hanContent(max(tk.i, i), min(tk.j, j), func(a, b int) {
				if b-a == 1 && strings.ContainsRune("内后前里中上下时", t.at(a)) {
					return
				}
				add(t.folded(a, b))
			})
		}
	}
	return b.String()
}

// keywordQuery reports a search-box query: two or more terms separated by
// spaces, no question word, no question mark ("报销 审批 5000", "VPN 809",
// "expense report deadline"). It stands on its own.
func (t *text) keywordQuery(toks []token) bool {
	terms := 0
	for k, tk := range toks {
		switch tk.kind {
		case tokPunct:
			return false
		case tokWord:
			if whWords[tk.low] || k == 0 && auxWords[tk.low] {
				return false
			}
		}
		if k > 0 && tk.kind != tokPunct && isSpace(t.at(tk.i-1)) {
			terms++
		}
	}
	if terms == 0 || strings.ContainsRune(t.src, '?') || strings.ContainsRune(t.src, '？') {
		return false
	}
	return t.hasAnyHan(0, len(t.cs), hanQuestionWords) == ""
}

// hasAnyHan reports whether any of phrases occurs in the CJK text of [i, j).
func (t *text) hasAnyHan(i, j int, ps []phrase) string {
	for p := i; p < j; p++ {
		c := t.cs[p].r
		if !isHan(c) {
			continue
		}
		for _, s := range ps {
			if s.r[0] == c && p+len(s.r) <= j && t.hasRunes(p, s.r) {
				return s.s
			}
		}
	}
	return ""
}

// ellipsis reports an elided question: a short phrase that stands for the
// previous question with one part changed ("那 X 呢", "X 呢？", "What about
// X?", "And for X?", "X too?", a bare "P-205？"). It returns the phrase's char
// range.
func (t *text) ellipsis(toks []token, refs []ref) (int, int, bool) {
	i, j := 0, len(t.cs)
	for i < j && (isSpace(t.at(i)) || isPunct(t.at(i))) {
		i++
	}
	for j > i && (isSpace(t.at(j-1)) || isPunct(t.at(j-1))) {
		j--
	}
	if i >= j {
		return 0, 0, false
	}
	if t.han {
		return t.hanEllipsis(toks, refs, i, j)
	}
	return t.latinEllipsis(toks, refs, i, j)
}

// bareTerm reports a question that is only a short noun phrase and a
// question mark ("招待费？", "Entertainment expenses?"). It may be an
// elided question or a new topic; the rewriter takes it as elided only when
// the previous question has a slot for it.
func (t *text) bareTerm(toks []token, refs []ref) (int, int, bool) {
	if len(refs) > 0 || !strings.ContainsAny(t.src, "?？") {
		return 0, 0, false
	}
	i, j := 0, len(t.cs)
	for i < j && (isSpace(t.at(i)) || isPunct(t.at(i))) {
		i++
	}
	for j > i && (isSpace(t.at(j-1)) || isPunct(t.at(j-1))) {
		j--
	}
	if i >= j || t.keywords(toks, i, j, nil) == "" {
		return 0, 0, false
	}
	words, verbs, han := 0, 0, 0
	for _, tk := range toks {
		switch tk.kind {
		case tokPunct:
			if tk.i > i && tk.j < j {
				return 0, 0, false
			}
		case tokWord:
			if whWords[tk.low] || auxWords[tk.low] {
				return 0, 0, false
			}
			if latinVerb(tk.low) {
				verbs++
			}
			words++
		case tokHan:
			han += tk.j - tk.i
		}
	}
	if words > 3 || words > 0 && verbs == words || han > 6 || t.hasAnyHan(i, j, hanQuestionWords) != "" {
		return 0, 0, false
	}
	return i, j, true
}

func (t *text) hanEllipsis(toks []token, refs []ref, i, j int) (int, int, bool) {
	marked := false
	if t.at(j-1) == '呢' {
		j--
		marked = true
	}
	opened := false
	for _, o := range hanOpeners {
		if t.hasAt(i, o) {
			i += utf8.RuneCountInString(o)
			opened = true
			break
		}
	}
	for _, s := range []string{"的话", "怎么样", "又如何", "如何", "的情况", "情况"} {
		if n := utf8.RuneCountInString(s); j-n > i && t.hasAt(j-n, s) && (opened || marked || s == "的话") {
			j -= n
			marked = true
			break
		}
	}
	// X 也一样吗 / 也是吗 / 也适用吗.
	if !marked {
		for p := i + 1; p < j; p++ {
			if t.at(p) == '也' {
				rest := strings.TrimRight(t.folded(p+1, j), "吗呢?")
				if n := utf8.RuneCountInString(rest); n >= 1 && n <= 3 && isHanString(rest) && t.hasAnyHan(p+1, p+1+n, hanQuestionWords) == "" {
					j, marked = p, true // P-205 也支持吗
				}
				break
			}
		}
	}
	i = t.skipSpaces(i)
	j = t.backSpaces(j)
	for j > i && isPunct(t.at(j-1)) {
		j--
	}
	if i >= j {
		return 0, 0, false
	}
	onlySpans := true
	for _, tk := range toks {
		if tk.i >= i && tk.j <= j && tk.kind != tokSpan && tk.kind != tokPunct {
			if tk.kind == tokHan && strings.Trim(t.folded(tk.i, tk.j), "的是呢吗") == "" {
				continue
			}
			onlySpans = false
		}
	}
	hasSpan := false
	for _, s := range t.spans {
		if s.i >= i && s.j <= j {
			hasSpan = true
		}
	}
	if !(marked || opened && utf8.RuneCountInString(t.folded(i, j)) <= 8 || onlySpans && hasSpan) {
		return 0, 0, false
	}
	if j-i > 20 || t.hasAnyHan(i, j, hanQuestionWords) != "" || !hasSpan && t.keywords(toks, i, j, nil) == "" {
		return 0, 0, false
	}
	for p := i; p < j; p++ {
		if isClauseEnd(t.at(p)) {
			return 0, 0, false
		}
	}
	for _, r := range refs {
		if r.i >= i && r.j <= j {
			return 0, 0, false
		}
	}
	return i, j, true
}

func (t *text) latinEllipsis(toks []token, refs []ref, i, j int) (int, int, bool) {
	// Words of [i, j).
	var ws []token
	for _, tk := range toks {
		if tk.i >= i && tk.j <= j {
			ws = append(ws, tk)
		}
	}
	if len(ws) == 0 {
		return 0, 0, false
	}
	k := 0
	opened := false
	for k < len(ws) && ws[k].kind == tokPunct {
		k++
	}
	for _, o := range latinOpeners {
		n := len(strings.Fields(o))
		if k+n > len(ws) {
			continue
		}
		match := true
		for q, w := range strings.Fields(o) {
			if ws[k+q].kind != tokWord || ws[k+q].low != w && !(w == "it's" && ws[k+q].low == "it’s") {
				match = false
				break
			}
		}
		if match {
			k += n
			opened = true
			break
		}
	}
	// "Does Plus?", "Is the WM-900?": an auxiliary before nothing but
	// entities asks the previous question of them.
	auxOpened := false
	if !opened && k+1 < len(ws) && ws[k].kind == tokWord && auxWords[ws[k].low] {
		k++
		opened, auxOpened = true, true
	}
	end := len(ws)
	marked := false
	if !opened && end-k >= 2 && ws[end-1].kind == tokWord {
		switch ws[end-1].low {
		case "too", "also":
			end--
			marked = true
		case "well":
			if ws[end-2].low == "as" && end-k >= 3 {
				end -= 2
				marked = true
			}
		}
	}
	for k < end && ws[k].kind == tokPunct {
		k++
	}
	if k >= end {
		return 0, 0, false
	}
	onlySpans := true
	hasSpan := false
	for _, w := range ws[k:end] {
		switch w.kind {
		case tokSpan:
			hasSpan = true
		case tokWord:
			if !determiners[w.low] {
				onlySpans = false
			}
		}
	}
	if !(opened || marked || onlySpans && hasSpan) || auxOpened && !(onlySpans && hasSpan) {
		return 0, 0, false
	}
	if end-k > 8 {
		return 0, 0, false
	}
	for _, w := range ws[k:end] {
		if w.kind == tokWord && (auxWords[w.low] || whWords[w.low]) {
			return 0, 0, false
		}
		if w.kind == tokPunct && w.i > ws[k].i {
			return 0, 0, false
		}
	}
	for _, r := range refs {
		if r.i >= ws[k].i && r.j <= ws[end-1].j {
			return 0, 0, false
		}
	}
	return ws[k].i, ws[end-1].j, true
}
