package query

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Split returns the independent parts of a compound question, each a
// standalone question, or nil when the question is one ask.
//
// A question is compound when it asks two or more things that can be
// answered separately: clauses that are each a question ("退货要在几天内发
// 起，电子发票怎么申请？", "What are the core hours, and how many remote days
// are allowed?") or a coordination distributed by 分别/各/respectively
// ("退货时限和发票申请方法分别是什么"). A clause that is not an ask ("我是新员
// 工，…", "If I leave in March, …"), or has no content of its own ("…，怎么
// 退？"), stays with its neighbour. A dependent chain is not split: a part
// that refers back to an earlier one (它, its, 他的) or follows from it (然后,
// then) needs the earlier answer first ("订单 A100 的产品适用哪份特殊规则",
// "Which model is assigned to E-1207, and what is its warranty?").
//
// Parts that name no identifier take those of the first part ("SKU-3381 的保
// 修期多久，支持以旧换新吗？" -> "SKU-3381 支持以旧换新吗？").
func Split(text string) []string { return SplitWith(nil, text) }

// SplitWith is Split with the names of a knowledge base's vocabulary (nil:
// none) as entities: a part that names one keeps its own subject.
func SplitWith(v Vocabulary, text string) []string {
	t := parse(text, v)
	toks := t.tokens()
	refs := t.findRefs(toks, true)
	cls := t.clauses(toks)
	if len(cls) == 1 {
		if parts := t.distribute(toks, cls[0]); len(parts) > 1 {
			return t.finishParts(parts)
		}
		return nil
	}
	// Merge clauses that cannot stand alone.
	type part struct{ i, j int }
	var parts []part
	pending := -1 // start of a non-ask clause waiting for the next one
	for k, c := range cls {
		ask := t.isAsk(toks, c.i, c.j)
		content := t.hasContent(toks, c.i, c.j)
		dep := k > 0 && t.isDependent(toks, refs, c.i, c.j, cls[0].i)
		switch {
		case dep || ask && !content:
			if len(parts) > 0 {
				parts[len(parts)-1].j = c.j
				continue
			}
			fallthrough
		case !ask:
			if pending < 0 {
				pending = c.i
			}
			continue
		}
		start := c.i
		if pending >= 0 {
			start, pending = pending, -1
		}
		parts = append(parts, part{start, c.j})
	}
	if pending >= 0 && len(parts) > 0 {
		parts[len(parts)-1].j = cls[len(cls)-1].j
	}
	if len(parts) < 2 {
		if len(parts) == 1 {
			if ds := t.distribute(toks, clause{parts[0].i, parts[0].j}); len(ds) > 1 {
				return t.finishParts(ds)
			}
		}
		return nil
	}
	var out []string
	for _, p := range parts {
		if ds := t.distribute(toks, clause(p)); len(ds) > 1 {
			out = append(out, ds...)
			continue
		}
		out = append(out, t.resolveNamed(toks, refs, p.i, p.j))
	}
	return t.finishParts(out)
}

// resolveNamed returns the text of [i, j) with a reference to the one
// subject named before it in place of the reference ("Also, can I freeze
// it?" after "… for Basic?" -> "can I freeze Basic?").
func (t *text) resolveNamed(toks []token, refs []ref, i, j int) string {
	for _, r := range refs {
		if r.i >= i && r.j <= j {
			if s := t.namedBefore(toks, r, 0, i); s != nil {
				return t.orig(i, r.i) + idText(s) + t.orig(r.j, j)
			}
		}
	}
	return t.orig(i, j)
}

// namedBefore returns the one subject (an identifier or a name of the
// vocabulary) named in [from, to) that the reference r can stand for:
// r is singular, not a person, nor a determiner or possessive, and
// [from, to) does not ask for a thing ("which", "who", 哪), whose answer
// the reference would need. Nil when there is no such single subject.
func (t *text) namedBefore(toks []token, r ref, from, to int) *span {
	if r.plural || r.person || r.det || r.poss || r.which {
		return nil
	}
	for _, tk := range toks {
		if tk.i >= from && tk.j <= to && tk.kind == tokWord && (tk.low == "which" || tk.low == "who") {
			return nil
		}
	}
	if t.hasAnyHan(from, to, phrases("哪", "谁")) != "" {
		return nil
	}
	var one *span
	for k := range t.spans {
		s := &t.spans[k]
		if s.i < from || s.j > to || !s.subject() {
			continue
		}
		if one != nil && !strings.EqualFold(one.value, s.value) {
			return nil
		}
		one = s
	}
	return one
}

type clause struct{ i, j int }

// clauses cuts t at sentence ends, commas and semicolons, and before an
// English "and" that starts a new question ("… hours and how many …").
func (t *text) clauses(toks []token) []clause {
	var out []clause
	start := 0
	cut := func(at, next int) {
		if at > start && strings.TrimSpace(t.orig(start, at)) != "" {
			out = append(out, clause{start, at})
		}
		start = next
	}
	for k, tk := range toks {
		switch tk.kind {
		case tokPunct:
			switch t.at(tk.i) {
			case '?', '!', ';', '。', ',', '\n':
				cut(tk.i, tk.j)
			case '.':
				if tk.j >= len(t.cs) || isSpace(t.at(tk.j)) || isHan(t.at(tk.j)) {
					cut(tk.i, tk.j)
				}
			}
		case tokWord:
			if tk.low == "and" && k+1 < len(toks) && toks[k+1].kind == tokWord && (whWords[toks[k+1].low] || auxWords[toks[k+1].low]) && k > 0 && toks[k-1].kind != tokPunct {
				cut(tk.i, tk.i)
			}
		}
	}
	cut(len(t.cs), len(t.cs))
	return out
}

// leadWords are connectives at the start of a clause that carry no ask.
var leadWords = lexSet("lead", "en")

var hanLeads = strings.Fields("另外 还有 以及 并且 而且 同时 此外 那么 再者 顺便问下 顺便问一下 顺便")

// isAsk reports a clause that asks something: a question word or particle,
// an interrogative start in English, or a request (请说明, tell me, list).
func (t *text) isAsk(toks []token, i, j int) bool {
	if t.hasAnyHan(i, j, hanQuestionWords) != "" || t.hasAnyHan(i, j, hanRequests) != "" {
		return true
	}
	for _, tk := range toks {
		if tk.i < i || tk.j > j || tk.kind == tokPunct {
			continue
		}
		if tk.kind != tokWord {
			return false
		}
		if leadWords[tk.low] {
			continue
		}
		return whWords[tk.low] || auxWords[tk.low] || latinRequests[tk.low]
	}
	return false
}

var hanRequests = phrases(strings.Fields("请说明 请介绍 告诉我 列出 介绍一下 说明一下 查一下 查下 说一下 解释一下 帮我查 请问")...)

var latinRequests = map[string]bool{"tell": true, "explain": true, "list": true, "describe": true, "show": true, "give": true, "find": true, "check": true, "please": true}

// hasContent reports a clause with content of its own: an entity, an
// English content word, or CJK content of two characters or more.
func (t *text) hasContent(toks []token, i, j int) bool {
	han := 0
	for _, tk := range toks {
		if tk.i < i || tk.j > j {
			continue
		}
		switch tk.kind {
		case tokSpan:
			return true
		case tokWord:
			if _, r := latinRefs[tk.low]; !stopWords[tk.low] && !r && !whWords[tk.low] {
				return true
			}
		case tokHan:
			t.hanContent(tk.i, tk.j, func(a, b int) { han += b - a })
		}
	}
	return han >= 2
}

// isDependent reports a clause that needs an earlier one's answer: it refers
// back or starts with a sequence word.
func (t *text) isDependent(toks []token, refs []ref, i, j, from int) bool {
	for _, r := range refs {
		if r.i >= i && r.j <= j && t.namedBefore(toks, r, from, i) == nil {
			return true
		}
	}
	k := t.skipSpaces(i)
	for _, s := range []string{"然后", "再", "接着", "之后", "随后", "据此", "并据此", "基于此", "根据这个", "根据它"} {
		if t.hasAt(k, s) {
			return true
		}
	}
	for _, tk := range toks {
		if tk.i < i || tk.kind != tokWord {
			continue
		}
		if tk.low == "and" {
			continue
		}
		return tk.low == "then" || tk.low == "next" || tk.low == "afterwards"
	}
	return false
}

// distribute splits a coordination distributed by 分别/各/respectively:
// "报销单和借款单分别由谁审批" -> "报销单由谁审批", "借款单由谁审批".
func (t *text) distribute(toks []token, c clause) []string {
	if t.han {
		return t.distributeHan(c)
	}
	return t.distributeLatin(toks, c)
}

func (t *text) distributeHan(c clause) []string {
	m, ml := -1, 0
	for p := c.i; p < c.j && m < 0; p++ {
		switch {
		case t.hasAt(p, "分别"):
			m, ml = p, 2
		case t.hasAt(p, "各自"):
			m, ml = p, 2
		case t.at(p) == '各' && strings.ContainsRune("是需要有多几怎由为在适用能可", t.at(p+1)) && !strings.ContainsRune("每", t.at(p-1)):
			m, ml = p, 1
		}
	}
	if m < 0 {
		return nil
	}
	// Items: the left side cut at coordinating words outside entities.
	var items []clause
	s := c.i
	for p := c.i; p < m; p++ {
		if t.spanAt(p) >= 0 {
			continue
		}
		if n := t.coordinatorAt(p); n > 0 {
			items = append(items, clause{s, p})
			s = p + n
			p += n - 1
		}
	}
	items = append(items, clause{s, m})
	if len(items) < 2 {
		return nil
	}
	pred := t.orig(m+ml, c.j)
	var out []string
	for _, it := range items {
		x := strings.TrimSpace(t.orig(it.i, it.j))
		if x == "" {
			return nil
		}
		out = append(out, x+pred)
	}
	return out
}

// coordinatorAt returns the length of a coordinating word at p (和, 与, 及,
// 以及, 跟, 、, 还有, 或), 0 when the character belongs to a word (参与, 及时).
func (t *text) coordinatorAt(p int) int {
	r := t.at(p)
	prev, next := t.at(p-1), t.at(p+1)
	switch {
	case t.hasAt(p, "以及"), t.hasAt(p, "还有"), t.hasAt(p, "或者"):
		return 2
	case r == '、':
		return 1
	case r == '和':
		if !strings.ContainsRune("解平谐", next) && !strings.ContainsRune("温缓总", prev) {
			return 1
		}
	case r == '与':
		if !strings.ContainsRune("参给赋", prev) {
			return 1
		}
	case r == '及':
		if !strings.ContainsRune("涉普来顾以", prev) && !strings.ContainsRune("时格", next) {
			return 1
		}
	case r == '跟':
		if !strings.ContainsRune("进踪随", next) {
			return 1
		}
	case r == '或':
		if !strings.ContainsRune("许", next) {
			return 1
		}
	}
	return 0
}

func (t *text) distributeLatin(toks []token, c clause) []string {
	var ws []token
	for _, tk := range toks {
		if tk.i >= c.i && tk.j <= c.j {
			ws = append(ws, tk)
		}
	}
	mark := -1
	for k, w := range ws {
		if w.kind == tokWord && (w.low == "respectively" || w.low == "each" && k == len(ws)-1) {
			mark = k
			break
		}
	}
	if mark < 0 {
		// "respectively" may sit in the next clause after a comma.
		e := t.skipSpaces(c.j + 1)
		if end, ok := t.wordAt(e, "respectively"); ok && t.at(c.j) == ',' {
			_ = end
			mark = len(ws)
		} else {
			return nil
		}
	}
	and := -1
	for k := mark - 1; k >= 0; k-- {
		if ws[k].kind == tokWord && ws[k].low == "and" {
			and = k
			break
		}
	}
	if and <= 0 || and+1 >= mark {
		return nil
	}
	// The left item starts after the last word that cannot be in a noun
	// phrase (a preposition, a verb form of be, a question word).
	s := and - 1
	for s > 0 {
		w := ws[s-1]
		if w.kind == tokWord && (prepositions[w.low] || auxWords[w.low] || whWords[w.low] || latinVerb(w.low)) || w.kind == tokPunct && t.at(w.i) != ',' {
			break
		}
		s--
	}
	// Items: the stretch [s, mark) cut at "and" and commas.
	var items []clause
	is := ws[s].i
	end := ws[mark-1].j
	for k := s; k < mark; k++ {
		w := ws[k]
		if w.kind == tokWord && w.low == "and" || w.kind == tokPunct && t.at(w.i) == ',' {
			if e := t.backSpaces(w.i); e > is {
				items = append(items, clause{is, e})
			}
			is = t.skipSpaces(w.j)
		}
	}
	if end > is {
		items = append(items, clause{is, end})
	}
	if len(items) < 2 {
		return nil
	}
	head := t.orig(c.i, ws[s].i)
	tail := ""
	if mark < len(ws) {
		tail = strings.TrimLeft(t.orig(ws[mark].j, c.j), " ")
	} else {
		tail = t.orig(end, c.j)
	}
	var out []string
	for _, it := range items {
		out = append(out, strings.TrimRight(head+t.orig(it.i, it.j)+" "+strings.TrimSpace(tail), " "))
	}
	return out
}

// finishParts tidies parts: leading connectives removed, a question mark
// added, English capitalised, and the first part's identifiers given to
// parts that name none.
func (t *text) finishParts(parts []string) []string {
	var ids []string
	out := make([]string, 0, len(parts))
	for k, s := range parts {
		s = strings.TrimSpace(s)
		for changed := true; changed; {
			changed = false
			for _, l := range hanLeads {
				if strings.HasPrefix(s, l) {
					s, changed = strings.TrimLeft(strings.TrimPrefix(s, l), " ，,"), true
				}
			}
			if f := strings.Fields(s); len(f) > 1 && leadWords[strings.TrimRight(strings.ToLower(f[0]), ",，")] {
				s, changed = strings.TrimLeft(s[len(f[0]):], " ,，"), true
			}
		}
		s = strings.TrimRight(s, " ,，;；")
		if s == "" {
			continue
		}
		pt := parse(s, t.voc)
		var own []string
		for _, sp := range pt.spans {
			if sp.subject() {
				own = append(own, idText(&sp))
			}
		}
		if k == 0 {
			ids = own
		} else if len(own) == 0 && len(ids) > 0 && !pt.namesProper() {
			s = strings.Join(ids, " ") + " " + s
		}
		last, _ := utf8.DecodeLastRuneInString(s)
		if !strings.ContainsRune("?？!！。.", last) {
			if t.han {
				s += "？"
			} else {
				s += "?"
			}
		}
		if r, n := utf8.DecodeRuneInString(s); unicode.IsLower(r) {
			s = string(unicode.ToUpper(r)) + s[n:]
		}
		out = append(out, s)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// namesProper reports a capitalised Latin word after the first word ("how
// many seats does Starter allow"): the part names its own subject, even
// when nothing reads it as an identifier.
func (t *text) namesProper() bool {
	first := true
	for _, tk := range t.tokens() {
		switch tk.kind {
		case tokPunct:
			first = true
		case tokWord:
			if !first && tk.low != "i" && !strings.HasPrefix(tk.low, "i'") && unicode.IsUpper(rune(t.src[t.off(tk.i)])) {
				return true
			}
			first = false
		default:
			first = false
		}
	}
	return false
}
