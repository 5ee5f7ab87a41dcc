package query

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/router"
)

// Message is one turn of a conversation, as chat APIs send it.
type Message struct {
	Role    string `json:"role"` // "user" or "assistant"
	Content string `json:"content"`
}

// Resolution records what a referring expression was taken to mean.
type Resolution struct {
	Mention string `json:"mention"` // as written in the question ("这个", "it")
	Value   string `json:"value"`   // the entity it stands for ("P-204")
	Turn    int    `json:"turn"`    // index into the history of the message the value came from
}

// Clarify asks the user which of several candidates a reference means.
type Clarify struct {
	Mention    string   `json:"mention"`
	Candidates []string `json:"candidates"`
}

// Rules recorded in Rewrite.Rule.
const (
	RuleEmpty      = "empty"      // nothing to understand
	RuleSmallTalk  = "small_talk" // the question is only small talk
	RuleNoHistory  = "no_history" // no conversation before the question
	RuleStandalone = "standalone" // the question stands on its own
	RuleReference  = "reference"  // a reference resolved to one candidate (or all, for a plural)
	RuleClarify    = "clarify"    // two or more candidates compete: ask back
	RuleUnresolved = "unresolved" // a reference with no candidate: the previous topic is carried
	RuleCarry      = "carry"      // no topic of its own: the previous subject, times or topic are carried
	RuleRejected   = "rejected"   // the rewrite failed the check a model's rewrite must pass: the question is kept
	// Elided questions ("那 X 呢", "What about X?") take the previous
	// question with one part changed; the suffix says which part.
	RuleEllipsisEntity      = "ellipsis:entity"      // an entity or number of the same slot replaced
	RuleEllipsisPreposition = "ellipsis:preposition" // "and for X": the phrase after the same preposition
	RuleEllipsisContrast    = "ellipsis:contrast"    // 国内 -> 国际, employees -> interns
	RuleEllipsisHead        = "ellipsis:head"        // a phrase with the same head noun (差旅住宿费 -> 餐费)
	RuleEllipsisSubject     = "ellipsis:subject"     // the subject of the question (年假 -> 调休, server snapshots -> laptop backups)
	RuleEllipsisName        = "ellipsis:name"        // the one name of the same script (Tokyo -> Osaka, VPN -> Wi-Fi)
	RuleEllipsisCarry       = "ellipsis:carry"       // no slot found: the new term with the previous question
)

// Rewrite is the understanding of one turn.
type Rewrite struct {
	// Text is the standalone query retrieval uses; it equals the question
	// when nothing was done.
	Text      string
	Rewritten bool // Text differs from the question
	FollowUp  bool // the question depended on the history
	// SmallTalk reports that the question is only small talk (greetings,
	// thanks, farewells): nothing to retrieve.
	SmallTalk  bool
	Resolved   []Resolution
	Unresolved []string // references that found no candidate
	Entities   []Entity // of Text, each with its role
	// Clarify, when not nil, means two or more candidates compete for a
	// reference: retrieve nothing and ask the user.
	Clarify *Clarify
	Rule    string // which rule decided (for the log)
	// Variants are extra search keys that lean on the history when no
	// rewrite was sure (RuleKept): the question with the previous
	// question's entities and keywords. They are searched beside Text and
	// never shown as the query.
	Variants []string
}

// Rewriter turns a question and the conversation before it into a
// standalone query. Implementations are safe for concurrent use.
type Rewriter interface {
	Rewrite(ctx context.Context, question string, history []Message) (Rewrite, error)
}

// RewriterFunc adapts a function to Rewriter.
type RewriterFunc func(ctx context.Context, question string, history []Message) (Rewrite, error)

// Rewrite calls f.
func (f RewriterFunc) Rewrite(ctx context.Context, question string, history []Message) (Rewrite, error) {
	return f(ctx, question, history)
}

// DefaultWindow is how many of the most recent history messages Offline
// reads when Offline.Window is 0.
const DefaultWindow = 8

// maxDepth bounds how far back the previous question is itself rewritten
// ("P-204 保修多久" -> "P-205 呢" -> "P-206 呢").
const maxDepth = 2

// Offline rewrites follow-up questions with rules over the history, without
// a model. Its zero value is ready to use and safe for concurrent use.
//
// Rules, first match wins: only small talk; no history; an elided question
// ("那 X 呢", "What about X?") becomes the previous question with X in place
// of the part of the same kind; a reference ("这个", "it", "它的") is
// resolved to the one candidate of the most recent exchange that names any,
// or asks back (Clarify) when two of the same kind compete, or carries the
// previous topic when there is none; a question without a topic of its own
// ("现在能退吗？") carries the previous subject and times; otherwise the
// question stands alone. See the package documentation for the limits.
type Offline struct {
	// Window is how many of the most recent history messages are read; 0
	// means DefaultWindow.
	Window int
	// Vocab, when not nil, is the knowledge base's vocabulary: its names
	// are entities of their table's kind, so that a follow-up replaces a
	// name with its sibling, a reference finds a name as its candidate and
	// two names of one kind are asked back. Nil reads entities by shape
	// alone.
	Vocab Vocabulary
	// Tenants, when not nil, gives each tenant its own vocabulary: the
	// rules read the one of the tenant in the context (WithTenant, ""
	// when none) instead of Vocab, so that one tenant's names are no
	// entities for another.
	Tenants *Vocabularies
}

var _ Rewriter = Offline{}

// Rewrite implements Rewriter. It returns ctx's error when ctx is already
// done, and an error wrapping ErrVocabulary, with the rules' rewrite made
// without a vocabulary, when the tenant's could not be loaded; it never
// fails otherwise.
func (o Offline) Rewrite(ctx context.Context, question string, history []Message) (Rewrite, error) {
	if err := ctx.Err(); err != nil {
		return Rewrite{Text: question, Rule: RuleStandalone}, err
	}
	v, verr := vocabFor(ctx, o.Tenants, o.Vocab)
	r := o.rewriteWith(v, question, history)
	return r, verr
}

// rewriteWith is Rewrite with the vocabulary v.
func (o Offline) rewriteWith(v Vocabulary, question string, history []Message) Rewrite {
	o.Vocab = v
	c := &conv{msgs: history, ts: make([]*text, len(history)), talk: make([]int8, len(history)), voc: o.Vocab}
	r := o.rewrite(question, nil, c, len(history), maxDepth)
	if r.Rewritten && r.Clarify == nil {
		// The rules splice phrases together; a splice can make a new
		// entity of its neighbours ("1" before "M00" reads as "1 M"). The
		// rewrite passes the check a model's would, or the question is kept.
		hs := make([]*text, len(history))
		for k := range history {
			hs[k] = c.text(k)
		}
		if err := check(parse(question, o.Vocab), hs, parse(r.Text, o.Vocab), false); err != nil {
			return Rewrite{Text: question, Rule: RuleRejected, Entities: parse(question, o.Vocab).entities()}
		}
	}
	return r
}

// conv is the history with its messages parsed on demand, shared by the
// rewrite of the question and those of the earlier questions it leans on.
type conv struct {
	msgs []Message
	ts   []*text
	talk []int8 // 0 not known yet, 1 small talk only, -1 not
	voc  Vocabulary
}

func (c *conv) text(k int) *text {
	if c.ts[k] == nil {
		c.ts[k] = parse(c.msgs[k].Content, c.voc)
	}
	return c.ts[k]
}

func (c *conv) smallTalk(k int) bool {
	if c.talk[k] == 0 {
		c.talk[k] = -1
		if router.DetectSmallTalk(c.msgs[k].Content).Only {
			c.talk[k] = 1
		}
	}
	return c.talk[k] == 1
}

// hmsg is a history message of the window, parsed.
type hmsg struct {
	idx  int
	role string
	t    *text
}

// window returns the most recent messages before end.
func (o Offline) window(c *conv, end int) []hmsg {
	n := o.Window
	if n <= 0 {
		n = DefaultWindow
	}
	start := max(0, end-n)
	out := make([]hmsg, 0, end-start)
	for k := start; k < end; k++ {
		m := c.msgs[k]
		if strings.TrimSpace(m.Content) == "" || m.Role != "user" && m.Role != "assistant" {
			continue // system and tool messages are not the conversation
		}
		out = append(out, hmsg{idx: k, role: m.Role, t: c.text(k)})
	}
	return out
}

// rewrite understands question in the context of the first end messages
// of c; pre, when not nil, is the question already parsed.
func (o Offline) rewrite(question string, pre *text, c *conv, end, depth int) Rewrite {
	r := Rewrite{Text: question, Rule: RuleStandalone}
	if strings.TrimSpace(question) == "" {
		r.Rule = RuleEmpty
		return r
	}
	if (pre == nil || end >= len(c.msgs)) && router.DetectSmallTalk(question).Only || pre != nil && end < len(c.msgs) && c.smallTalk(end) {
		r.Rule, r.SmallTalk = RuleSmallTalk, true
		return r
	}
	core := stripTalkLead(question)
	q := pre
	if q == nil || core != question {
		q = parse(core, c.voc)
	}
	qt := q.tokens()
	win := o.window(c, end)
	if len(win) == 0 {
		r.Rule = RuleNoHistory
		return finish(r, question, q)
	}
	if rr, ok := o.clarifyReply(r, question, q, c, win, depth); ok {
		return rr
	}
	// The previous question, itself understood in its own context.
	var p *text
	var pt []token
	for k := len(win) - 1; k >= 0; k-- {
		if win[k].role != "user" || c.smallTalk(win[k].idx) {
			continue
		}
		p = win[k].t
		if depth > 0 {
			if pr := o.rewrite(p.src, p, c, win[k].idx, depth-1); pr.Rewritten && pr.Clarify == nil {
				p = parse(pr.Text, c.voc)
			}
		}
		pt = p.tokens()
		break
	}
	refs := q.refs(qt)
	if len(refs) == 0 && !hasSubject(q) && (namedBefore(win) || subjectIn(win) && q.objectPronoun(qt)) {
		// "How much hotspot data does it give?" after a question on two
		// plans: words before the pronoun are no antecedent when the
		// conversation names things of the knowledge base.
		refs = q.findRefs(qt, true)
		if len(refs) == 0 {
			refs = q.placeRefs() // "那里有停车场吗？" after a hotel
		}
	}
	if hasSubject(q) {
		// "这个政策适用于 P-205 吗": the demonstrative points at the policy
		// talked about, not at another identifier.
		kept := refs[:0]
		for _, rf := range refs {
			if !rf.det {
				kept = append(kept, rf)
			}
		}
		refs = kept
	}
	if p != nil {
		if i, j, ok := q.ellipsis(qt, refs); ok {
			r.Text, r.Rule = elide(q, qt, i, j, p, pt)
			r.FollowUp = true
			if r.Rule == RuleEllipsisCarry {
				// No part of the previous question to replace ("What
				// about Japan?" after Mexico): a splice would ask about
				// both. The question is kept; the previous one only
				// boosts retrieval.
				r.Text, r.Rule = question, RuleKept
				r.Variants = historyVariant(q, p, pt)
			}
			return finish(r, question, q)
		}
		if i, j, ok := q.bareTerm(qt, refs); ok {
			if text, rule := elide(q, qt, i, j, p, pt); rule != RuleEllipsisCarry {
				r.Text, r.Rule, r.FollowUp = text, rule, true
				return finish(r, question, q)
			}
		}
	}
	if len(refs) > 0 {
		return resolve(r, question, q, refs, win, p, pt)
	}
	if p != nil {
		if ctx := carry(q, qt, p, pt); ctx != "" {
			r.Text, r.Rule, r.FollowUp = join(ctx, q.src, q.han), RuleCarry, true
		}
	}
	return finish(r, question, q)
}

// finish makes sure every entity of the question is in the text, and fills
// Rewritten and Entities.
func finish(r Rewrite, question string, q *text) Rewrite {
	if r.Text == question {
		if q.src == question {
			r.Entities = q.entities()
		} else {
			r.Entities = parse(question, q.voc).entities()
		}
		return r
	}
	rt := parse(r.Text, q.voc)
	var missing []string
	for k := range q.spans {
		if !hasEntity(rt, &q.spans[k]) {
			missing = append(missing, q.spans[k].value)
		}
	}
	if len(missing) > 0 {
		r.Text = strings.Join(missing, " ") + " " + r.Text
		rt = parse(r.Text, q.voc)
	}
	r.Rewritten = true
	r.Entities = rt.entities()
	return r
}

func hasEntity(t *text, s *span) bool {
	for k := range t.spans {
		if sameEntity(&t.spans[k], s) {
			return true
		}
	}
	return false
}

// stripTalkLead removes small talk before the first clause of a question
// ("谢谢！另外，…", "thanks! and what about …").
func stripTalkLead(q string) string {
	for {
		cut := strings.IndexFunc(q, func(r rune) bool {
			r = fold(r)
			return r == ',' || r == '!' || r == '.' || r == ';' || r == '~' || r == '。'
		})
		if cut <= 0 {
			return q
		}
		_, n := utf8.DecodeRuneInString(q[cut:])
		lead, rest := q[:cut], strings.TrimSpace(q[cut+n:])
		if rest == "" || !router.DetectSmallTalk(lead).Only {
			return q
		}
		q = rest
	}
}

// join puts carried context before a question.
func join(ctx, q string, han bool) string {
	if han {
		return ctx + "：" + q
	}
	return ctx + ": " + q
}

// dateDesc describes a date with its role: "去年购买", "purchased last year".
func dateDesc(s *span, han bool) string {
	if han {
		switch s.role {
		case RolePurchase:
			return s.value + "购买"
		case RoleReceipt:
			return s.value + "签收"
		case RoleShipment:
			return s.value + "发货"
		}
		return s.value
	}
	switch s.role {
	case RolePurchase:
		return "purchased " + s.value
	case RoleReceipt:
		return "received " + s.value
	case RoleShipment:
		return "shipped " + s.value
	}
	return s.value
}

func paren(parts []string, han bool) string {
	if len(parts) == 0 {
		return ""
	}
	if han {
		return "（" + strings.Join(parts, "，") + "）"
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// idText is an identifier with the word that introduced it ("订单 A100").
func idText(s *span) string {
	if s.kind == Order && s.cue != "" && s.cue != "#" {
		return s.cue + " " + s.value
	}
	// "error 809": a code of digits alone is a code only after its cue.
	if s.kind == Code && s.cue != "" && s.cue != "#" && strings.IndexFunc(s.value, func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		return s.cue + " " + s.value
	}
	return s.value
}

// cand is a candidate referent.
type cand struct {
	s    *span
	idx  int // history index of its message
	from *text
}

// candidates returns the identifiers of the most recent exchange (a user
// message and the replies after it) that names any identifier not already
// in the question, in order of mention.
func candidates(win []hmsg, q *text) []cand {
	end := len(win)
	for end > 0 {
		start := end - 1
		for start > 0 && win[start].role != "user" {
			start--
		}
		// What the user named comes first. An answer's names join them
		// when it introduced one thing ("Which dock fits the LT-450?" -
		// "The DK-3." - "How much is it?" asks back), or stand alone when
		// the user named none ("Which plans include roaming?" - "Team and
		// Enterprise."); an answer that names several things beside the
		// user's is quoting its evidence, and a reference means what the
		// user was asking about.
		cs := spansOf(win[start:start+1], q, nil)
		if start+1 < end {
			if more := spansOf(win[start+1:end], q, cs); len(cs) == 0 || len(more)-len(cs) <= 1 {
				cs = more
			}
		}
		if len(cs) > 0 {
			return cs
		}
		end = start
	}
	return nil
}

// spansOf appends to cs the subject entities of msgs that q does not name
// itself, each once.
func spansOf(msgs []hmsg, q *text, cs []cand) []cand {
	for _, m := range msgs {
		t := m.t
	next:
		for k := range t.spans {
			s := &t.spans[k]
			if !s.subject() || hasEntity(q, s) {
				continue
			}
			for _, c := range cs {
				if sameEntity(c.s, s) {
					continue next
				}
			}
			cs = append(cs, cand{s: s, idx: m.idx, from: t})
		}
	}
	return cs
}

// resolve handles a question with references.
func resolve(r Rewrite, question string, q *text, refs []ref, win []hmsg, p *text, pt []token) Rewrite {
	r.FollowUp = true
	things := refs[:0:0]
	for _, rf := range refs {
		if !rf.person {
			things = append(things, rf)
		}
	}
	var cs []cand
	if len(things) > 0 {
		cs = candidates(win, q)
	}
	if len(cs) == 0 {
		r.Rule = RuleUnresolved
		for _, rf := range refs {
			r.Unresolved = append(r.Unresolved, q.orig(rf.i, rf.j))
		}
		if p != nil {
			if ctx := p.keywords(pt, 0, len(p.cs), conflicts(q)); ctx != "" {
				r.Text = join(ctx, q.src, q.han)
			}
		}
		return finish(r, question, q)
	}
	plural := false
	for _, rf := range things {
		plural = plural || rf.plural
	}
	if !plural {
		kinds := map[string]int{}
		clar := false
		for _, c := range cs {
			for _, k := range c.s.kindKeys() {
				kinds[k]++
				clar = clar || kinds[k] >= 2
			}
		}
		if clar {
			r.Rule = RuleClarify
			c := &Clarify{Mention: q.orig(things[0].i, things[0].j)}
			for _, x := range cs {
				c.Candidates = append(c.Candidates, x.s.value)
			}
			r.Clarify = c
			r.Entities = q.entities()
			if q.src != question {
				r.Entities = parse(question, q.voc).entities()
			}
			return r
		}
	}
	// The value each reference stands for.
	var vals []string
	for _, c := range cs {
		vals = append(vals, idText(c.s))
	}
	value := strings.Join(vals, " ")
	if plural && len(vals) > 1 {
		if q.han {
			value = strings.Join(vals, " 和 ")
		} else {
			value = strings.Join(vals[:len(vals)-1], ", ") + " and " + vals[len(vals)-1]
		}
	}
	choice := strings.Join(vals, "、") // for "哪个": the candidates to choose from
	if !q.han {
		choice = strings.Join(vals, " or ")
	}
	// Times said with the referent keep their role.
	var dates []string
	if !hasKind(q, Date) {
		from := cs[0].from
		for k := range from.spans {
			if from.spans[k].kind == Date {
				dates = append(dates, dateDesc(&from.spans[k], q.han))
			}
		}
	}
	var b strings.Builder
	last := 0
	for n, rf := range things {
		b.WriteString(q.src[last:q.off(rf.i)])
		v := value
		if n == 0 && !rf.which {
			v += paren(dates, q.han)
		}
		switch {
		case rf.which:
			v = q.orig(rf.i, rf.j) + paren([]string{choice}, q.han)
		case rf.poss && q.han:
			v += "的"
		case rf.poss:
			v += "'s"
		case rf.det && q.han:
			v += " "
		}
		b.WriteString(v)
		last = q.off(rf.j)
		for _, c := range cs {
			r.Resolved = append(r.Resolved, Resolution{Mention: q.orig(rf.i, rf.j), Value: c.s.value, Turn: c.idx})
		}
	}
	b.WriteString(q.src[last:])
	r.Text, r.Rule = b.String(), RuleReference
	return finish(r, question, q)
}

func hasSubject(t *text) bool {
	for k := range t.spans {
		if t.spans[k].subject() {
			return true
		}
	}
	return false
}

// subjectIn reports a subject (an identifier, a name) in the messages.
func subjectIn(win []hmsg) bool {
	for _, m := range win {
		if m.role == "user" && hasSubject(m.t) {
			return true
		}
	}
	return false
}

// objectPronoun reports "it" or "them" as the object of a verb or a
// preposition in a question of one clause ("Can I change the SIM type on
// it?"): a pronoun there cannot mean a noun of its own clause, so its
// antecedent is in the conversation. A subordinate clause or a comma
// before it ("before it was a prison") leaves the question's own reading.
func (t *text) objectPronoun(toks []token) bool {
	for n, tk := range toks {
		switch tk.kind {
		case tokPunct:
			if n > 0 && tk.i < len(t.cs) && strings.ContainsRune(",;:，；", t.at(tk.i)) {
				return false
			}
		case tokWord:
			if subordinators[tk.low] {
				return false
			}
			if (tk.low == "it" || tk.low == "them") && n > 0 && toks[n-1].kind == tokWord {
				prev := toks[n-1].low
				return prepositions[prev] || latinVerb(prev) && !auxWords[prev]
			}
		}
	}
	return false
}

func hasKind(t *text, k EntityKind) bool {
	for _, s := range t.spans {
		if s.kind == k {
			return true
		}
	}
	return false
}

// conflicts returns a filter dropping the entities of another text that the
// question replaces (same slot).
func conflicts(q *text) func(*span) bool {
	return func(s *span) bool {
		for k := range q.spans {
			if sameSlot(s, &q.spans[k]) {
				return true
			}
		}
		return false
	}
}

// carry returns the context a question without a topic of its own takes
// from the previous question: its identifiers and times (with their roles),
// or its topic when it names no identifier. It returns "" for a question
// that stands alone.
func carry(q *text, qt []token, p *text, pt []token) string {
	han, words, subject := q.topic(qt)
	if subject || q.keywordQuery(qt) {
		return ""
	}
	noTopic := han < 2 && words == 0
	cue := false
	// A continuation cue carries context when the question says little of
	// its own, or when the previous message anchored an identifier in
	// time ("我前天收到的 AX-2 …" + "还在退货期内吗？").
	anchored := hasSubject(p) && hasKind(p, Date)
	if !noTopic && !hasKind(q, Date) && (han == 0 && words <= 1 || anchored) {
		if q.han {
			cue = q.hasAnyHan(0, len(q.cs), hanContinuation) != "" && utf8.RuneCountInString(q.src) <= 16
		} else {
			n := 0
			for k, tk := range qt {
				if tk.kind == tokWord {
					n++
					cue = cue || latinContinuation[tk.low] || tk.low == "if" && k <= 3 && n <= 3
				}
			}
			cue = cue && n <= 10
		}
	}
	if !noTopic && !cue {
		return ""
	}
	var ids, dates []string
	for k := range p.spans {
		s := &p.spans[k]
		switch {
		case s.subject():
			ids = append(ids, idText(s))
		case s.kind == Date && !conflicts(q)(s):
			dates = append(dates, dateDesc(s, q.han))
		}
	}
	if len(ids) > 0 {
		return strings.Join(ids, " ") + paren(dates, q.han)
	}
	if cue && len(dates) == 0 {
		return ""
	}
	return p.keywords(pt, 0, len(p.cs), conflicts(q))
}

// edit replaces chars [i, j) of a text.
type edit struct {
	i, j int
	s    string
}

func applyEdits(t *text, edits []edit) string {
	sort.Slice(edits, func(a, b int) bool { return edits[a].i < edits[b].i })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if t.off(e.i) < last {
			continue
		}
		b.WriteString(t.src[last:t.off(e.i)])
		// Keep the new text from fusing with its neighbours ("0k.10" with
		// 0k replaced by 0 must not read 0.10).
		before := isAlnum(t.at(e.i-1)) || glues(t.at(e.i-1)) && isAlnum(t.at(e.i-2))
		after := isAlnum(t.at(e.j)) || glues(t.at(e.j)) && isAlnum(t.at(e.j+1))
		if first, _ := utf8.DecodeRuneInString(e.s); e.s != "" && before && glues(fold(first)) {
			b.WriteByte(' ')
		}
		b.WriteString(e.s)
		if lastR, _ := utf8.DecodeLastRuneInString(e.s); e.s != "" && after && glues(fold(lastR)) {
			b.WriteByte(' ')
		}
		last = t.off(e.j)
	}
	b.WriteString(t.src[last:])
	return b.String()
}

// glues reports a character that joins the ASCII characters next to it into
// one token (letters, digits and the separators inside numbers and codes).
func glues(r rune) bool {
	return isAlnum(r) || r == '.' || r == ',' || r == '-' || r == '_' || r == ':' || r == '/'
}

// alphaPrefix is the letters an identifier key starts with ("DK" of DK3).
func alphaPrefix(key string) string {
	for k, r := range key {
		if !isLetter(r) {
			return key[:k]
		}
	}
	return key
}

// elide rewrites the elided question whose phrase is chars [i, j) of q as
// the previous question p with the phrase in place of the part it replaces.
func elide(q *text, qt []token, i, j int, p *text, pt []token) (string, string) {
	var xs []*span
	for k := range q.spans {
		if s := &q.spans[k]; s.i >= i && s.j <= j {
			xs = append(xs, s)
		}
	}
	if len(xs) > 0 {
		return elideEntities(q, qt, i, j, xs, p, pt)
	}
	out, rule := elideTerm(q, qt, i, j, p, pt)
	if rule == RuleEllipsisCarry && p.voc != nil && namesKnown(p) {
		// A term the vocabulary does not know ("招待费") may still replace
		// the part of the previous question that it names as a word
		// ("差旅报销" -> "招待费"): read the previous question as words.
		p0 := parse(p.src, nil)
		if o, r := elideTerm(q, qt, i, j, p0, p0.tokens()); r != RuleEllipsisCarry {
			return o, r
		}
	}
	return out, rule
}

// namesKnown reports a text with a name of the vocabulary.
func namesKnown(t *text) bool {
	for k := range t.spans {
		if t.spans[k].vk != "" {
			return true
		}
	}
	return false
}

func elideEntities(q *text, qt []token, i, j int, xs []*span, p *text, pt []token) (string, string) {
	used := make([]bool, len(p.spans))
	var edits []edit
	var extra []string
	for _, x := range xs {
		best, bestScore := -1, -1
		for k := range p.spans {
			ps := &p.spans[k]
			if used[k] || !sameSlot(ps, x) {
				continue
			}
			score := 0
			if ps.kind == x.kind {
				score += 4
			}
			if ps.subject() && alphaPrefix(ps.key) == alphaPrefix(x.key) {
				score += 2
			}
			if ps.numeric() && ps.unit == x.unit {
				score += 2
			}
			if ps.kind == Date && ps.role == x.role {
				score++
			}
			if score > bestScore {
				best, bestScore = k, score
			}
		}
		xv := q.orig(x.i, x.j)
		if best < 0 {
			extra = append(extra, xv)
			continue
		}
		used[best] = true
		ps := &p.spans[best]
		if x.kind == Number && x.unit == "" && ps.kind != Number && ps.nj > ps.ni {
			edits = append(edits, edit{ps.ni, ps.nj, xv}) // 30 天 + "40 呢" -> 40 天
		} else {
			edits = append(edits, edit{ps.i, ps.j, xv})
		}
	}
	// Content of the phrase besides its entities ("海外的 P-205 呢").
	var rest []token
	for _, tk := range qt {
		if tk.i >= i && tk.j <= j && tk.kind != tokSpan {
			rest = append(rest, tk)
		}
	}
	if han, words, _ := q.topic(rest); han >= 2 || words > 0 {
		if kw := q.keywords(rest, i, j, nil); kw != "" && !containsFold(p.src, kw) {
			extra = append(extra, kw)
		}
	}
	if len(edits) == 0 {
		// No slot of the same kind: a time word or a term may still
		// have a counterpart (周末 for 工作日).
		var words []token
		for _, tk := range qt {
			if tk.i >= i && tk.j <= j && (tk.kind == tokWord || tk.kind == tokSpan) {
				if tk.kind == tokSpan {
					tk.low = strings.ToLower(q.spans[tk.span].value)
				}
				words = append(words, tk)
			}
		}
		if !q.han && len(words) >= 2 && words[0].kind == tokWord && prepositions[words[0].low] {
			if out, ok := replaceAfterPreposition(p, pt, words[0].low, q.orig(q.skipSpaces(words[0].j), j)); ok {
				return out, RuleEllipsisPreposition
			}
		}
		if out, ok := replaceContrast(q, i, j, words, p, pt); ok {
			return out, RuleEllipsisContrast
		}
		return join(strings.Join(extra, " "), p.src, q.han), RuleEllipsisCarry
	}
	out := applyEdits(p, edits)
	if len(extra) > 0 {
		out = strings.Join(extra, " ") + " " + out
	}
	return out, RuleEllipsisEntity
}

// elideTerm replaces a part of p by a phrase that is not an entity.
func elideTerm(q *text, qt []token, i, j int, p *text, pt []token) (string, string) {
	modifier := false
	if q.han {
		for j > i && (q.at(j-1) == '的' || isSpace(q.at(j-1))) {
			j--
			modifier = true
		}
		for i < j && (q.at(i) == '是' || isSpace(q.at(i))) {
			i++
		}
	} else {
		for _, tk := range qt {
			if tk.i == i && tk.kind == tokWord && (tk.low == "the" || tk.low == "a" || tk.low == "an") {
				i = q.skipSpaces(tk.j)
			}
		}
	}
	if i >= j {
		return p.src, RuleEllipsisCarry
	}
	term := q.orig(i, j)
	var words []token
	for _, tk := range qt {
		if tk.i >= i && tk.j <= j && tk.kind == tokWord {
			words = append(words, tk)
		}
	}
	// "and for contractors": the phrase after the same preposition.
	if !q.han && len(words) >= 2 && words[0].i == i && prepositions[words[0].low] {
		if out, ok := replaceAfterPreposition(p, pt, words[0].low, q.orig(q.skipSpaces(words[0].j), j)); ok {
			return out, RuleEllipsisPreposition
		}
	}
	if out, ok := replaceContrast(q, i, j, words, p, pt); ok {
		return out, RuleEllipsisContrast
	}
	if out, ok := replaceHead(q, i, j, words, p, pt, term); ok {
		return out, RuleEllipsisHead
	}
	if out, ok := replaceName(q, i, j, words, p, pt, term); ok {
		return out, RuleEllipsisName
	}
	if q.han && p.han && !modifier {
		if s0, m, ok := hanSubject(p); ok {
			if q.hanTopic(i, j) == 0 {
				// 出国: a verb phrase narrows the subject rather than
				// replacing it.
				return applyEdits(p, []edit{{s0, s0, term}}), RuleEllipsisSubject
			}
			for k := s0; k < m; k++ {
				if p.at(k) == '的' && k > s0 {
					// 北京的住宿标准 + 厦门呢: the modifier changes.
					return applyEdits(p, []edit{{s0, k, term}}), RuleEllipsisSubject
				}
			}
			return applyEdits(p, []edit{{s0, m, term}}), RuleEllipsisSubject
		}
	}
	if q.han && p.han && modifier {
		if s0, m, ok := hanSubject(p); ok {
			for k := s0; k < m; k++ {
				if p.at(k) == '的' {
					return applyEdits(p, []edit{{s0, k, term}}), RuleEllipsisSubject
				}
			}
			return applyEdits(p, []edit{{s0, s0, term + "的"}}), RuleEllipsisSubject
		}
	}
	if !q.han && !p.han && len(words) > 0 {
		if s0, m, ok := latinSubject(p, pt); ok {
			// "How long are server snapshots kept?" + "And laptop
			// backups?": the subject changes.
			return applyEdits(p, []edit{{s0, m, term}}), RuleEllipsisSubject
		}
	}
	if modifier {
		term += "的"
	}
	return join(term, p.src, q.han), RuleEllipsisCarry
}

// participle reports a past participle, which ends an English subject
// phrase: "how long are server snapshots kept". Regular ones end in -ed.
func participle(w string) bool { return irregularParticiples[w] || strings.HasSuffix(w, "ed") }

var irregularParticiples = map[string]bool{
	"kept": true, "made": true, "done": true, "paid": true, "sent": true, "held": true, "given": true, "taken": true,
	"set": true, "run": true, "built": true, "sold": true, "shown": true, "known": true, "written": true, "seen": true,
	"put": true, "got": true, "gotten": true, "found": true, "brought": true, "bought": true, "handled": true,
}

// latinSubject finds the subject of an English question of the plain
// shapes "wh-word [how-word] aux|verb [determiner] SUBJECT [participle]
// [adverb]?" ("How long are server snapshots kept?", "Who owns the
// backup system?", "What is the warranty?"). It refuses a question with a
// preposition or a clause after the subject, where the phrase to replace
// is ambiguous ("the deadline for expense claims").
func latinSubject(p *text, pt []token) (int, int, bool) {
	var w []token
	for _, tk := range pt {
		if tk.kind != tokWord {
			if tk.kind == tokSpan {
				return 0, 0, false // an entity is replaced by its own rules
			}
			continue
		}
		w = append(w, tk)
	}
	k := 0
	if k < len(w) && whWords[w[k].low] {
		k++
		if w[k-1].low == "how" && k < len(w) && (w[k].low == "long" || w[k].low == "often" || w[k].low == "much" || w[k].low == "many" || w[k].low == "soon") {
			k++
		}
	} else {
		return 0, 0, false
	}
	if k >= len(w) || prepositions[w[k].low] || determiners[w[k].low] {
		return 0, 0, false
	}
	k++ // the auxiliary or the verb
	for k < len(w) && determiners[w[k].low] {
		k++
	}
	start := k
	for k < len(w) && !stopWords[w[k].low] && !auxWords[w[k].low] && !prepositions[w[k].low] &&
		!participle(w[k].low) && !whWords[w[k].low] {
		k++
	}
	if k == start || k-start > 4 {
		return 0, 0, false
	}
	end := k
	if k < len(w) && participle(w[k].low) {
		k++
	}
	if k < len(w) && (w[k].low == "up" || w[k].low == "out" || w[k].low == "back" || w[k].low == "off") {
		k++
	}
	if k != len(w) {
		return 0, 0, false
	}
	return w[start].i, w[end-1].j, true
}

// replaceAfterPreposition replaces the phrase after the last prep of p.
func replaceAfterPreposition(p *text, pt []token, prep, with string) (string, bool) {
	at := -1
	for k, tk := range pt {
		if tk.kind == tokWord && tk.low == prep {
			at = k
		}
	}
	if at < 0 || at+1 >= len(pt) {
		return "", false
	}
	end := at + 1
	for end < len(pt) {
		tk := pt[end]
		if tk.kind == tokPunct || tk.kind == tokWord && end > at+1 && (auxWords[tk.low] || whWords[tk.low] || prepositions[tk.low] || tk.low == "and" || tk.low == "or" || tk.low == "but") {
			break
		}
		end++
	}
	if end == at+1 {
		return "", false
	}
	return applyEdits(p, []edit{{pt[at+1].i, pt[end-1].j, with}}), true
}

// replaceContrast swaps a member of a contrast set (国内 -> 国际).
func replaceContrast(q *text, i, j int, words []token, p *text, pt []token) (string, bool) {
	// Members of contrast sets the phrase names.
	type member struct {
		set int
		s   string
	}
	var ms []member
	inTerm := map[string]bool{}
	if q.han {
		phrase := q.folded(i, j)
		for k, st := range contrastSets {
			best := ""
			for _, m := range st {
				if isHanString(m) && strings.Contains(phrase, m) && len(m) > len(best) {
					best = m
				}
			}
			if best != "" {
				ms = append(ms, member{k, best})
				inTerm[best] = true
			}
		}
	}
	for _, w := range words {
		inTerm[singular(w.low)] = true
		if k, ok := contrastIndex[singular(w.low)]; ok {
			ms = append(ms, member{k, q.orig(w.i, w.j)})
		} else if k, ok := contrastIndex[w.low]; ok {
			ms = append(ms, member{k, q.orig(w.i, w.j)})
		}
	}
	// Another member of the same set in the previous question, in either
	// script, that the phrase does not name itself.
	for _, m := range ms {
		ml := strings.ToLower(m.s)
		for _, o := range contrastSets[m.set] {
			if inTerm[o] || o == ml || singular(o) == singular(ml) || strings.Contains(ml, o) || strings.Contains(o, ml) {
				continue
			}
			if isHanString(o) {
				if at := indexHan(p, o); at >= 0 {
					return applyEdits(p, []edit{{at, at + utf8.RuneCountInString(o), m.s}}), true
				}
				continue
			}
			for x, tk := range pt {
				if tk.kind == tokWord && !inTerm[singular(tk.low)] && (tk.low == o || singular(tk.low) == o) {
					return applyEdits(p, []edit{{tk.i, tk.j, contrastWith(q, words, m.s, pt[x+1:])}}), true
				}
			}
		}
	}
	return "", false
}

// contrastWith is what replaces the other member in the previous question:
// the member itself, or the whole phrase when the member only modifies its
// head and the other member stands alone ("full-time staff" for "interns";
// but "full-time" for "part-time" in "part-time staff").
func contrastWith(q *text, words []token, member string, after []token) string {
	if q.han || len(words) < 2 || len(words) > 3 || !strings.EqualFold(q.orig(words[0].i, words[0].j), member) {
		return member
	}
	head := words[len(words)-1].low
	for _, tk := range after {
		if tk.kind == tokWord {
			if singular(tk.low) == singular(head) {
				return member
			}
			break
		}
	}
	return q.orig(words[0].i, words[len(words)-1].j)
}

// replaceName swaps a name for the one name of the previous question: a
// Latin term into a Chinese question that holds one Latin word ("VPN 连不
// 上怎么办" + "那 Wi-Fi 呢"), or a capitalised word into an English question
// with one capitalised word after its first ("per diem in Tokyo" + "What
// about Osaka?").
func replaceName(q *text, i, j int, words []token, p *text, pt []token, term string) (string, bool) {
	if len(words) == 0 || len(words) > 3 || strings.ContainsFunc(term, isHan) {
		return "", false
	}
	var cands []token
	for k, tk := range pt {
		if tk.kind != tokWord {
			continue
		}
		switch {
		case p.han:
			if k > 0 && pt[k-1].kind == tokWord && len(cands) > 0 && cands[len(cands)-1].j == pt[k-1].j {
				cands[len(cands)-1].j = tk.j // one run of Latin words
				continue
			}
			cands = append(cands, tk)
		case isUpper(q.at(words[0].i)) && k > 0 && pt[k-1].kind != tokPunct && isUpper(p.at(tk.i)) && tk.low != "i":
			cands = append(cands, tk) // a capitalised word after the first
		}
	}
	if len(cands) != 1 {
		return "", false
	}
	c := cands[0]
	if compactKey(p.orig(c.i, c.j)) == compactKey(term) {
		return "", false
	}
	return applyEdits(p, []edit{{c.i, c.j, term}}), true
}

func isHanString(s string) bool {
	for _, r := range s {
		if !isHan(r) {
			return false
		}
	}
	return s != ""
}

// indexHan returns the char index of the last occurrence of s in p outside
// entities, or -1.
func indexHan(p *text, s string) int {
	n := utf8.RuneCountInString(s)
	for k := len(p.cs) - n; k >= 0; k-- {
		if p.hasAt(k, s) && p.spanAt(k) < 0 {
			return k
		}
	}
	return -1
}

// replaceHead swaps the phrase of p that ends in the phrase's head noun
// (annual leave -> sick leave, 差旅住宿费 -> 餐费).
func replaceHead(q *text, i, j int, words []token, p *text, pt []token, term string) (string, bool) {
	if !q.han {
		if len(words) == 0 || words[len(words)-1].j != j {
			return "", false
		}
		head := singular(words[len(words)-1].low)
		if stopWords[head] || len(words) == 1 && latinVerb(head) {
			return "", false
		}
		for k := len(pt) - 1; k >= 0; k-- {
			tk := pt[k]
			if tk.kind != tokWord || singular(tk.low) != head {
				continue
			}
			s := k
			for s > 0 && pt[s-1].kind == tokWord && !stopWords[pt[s-1].low] && !prepositions[pt[s-1].low] && !auxWords[pt[s-1].low] && !whWords[pt[s-1].low] && !latinVerb(pt[s-1].low) {
				s--
			}
			if compactKey(p.orig(pt[s].i, tk.j)) == compactKey(term) {
				return "", false
			}
			return applyEdits(p, []edit{{pt[s].i, tk.j, term}}), true
		}
		return "", false
	}
	n := j - i
	mixed := strings.ContainsFunc(term, func(r rune) bool { return isAlnum(fold(r)) })
	for _, sl := range []int{2, 1} {
		if sl > n {
			continue
		}
		suf := q.orig(j-sl, j)
		if !isHanString(suf) || strings.ContainsAny(suf, hanBoundary) {
			continue
		}
		at := indexHan(p, suf)
		if at < 0 || !mixed && !p.phraseEnd(at+sl) {
			continue
		}
		e := at + sl
		s := at
		for s > 0 && p.spanAt(s-1) < 0 && e-s < n+4 {
			c := p.at(s - 1)
			if isHan(c) && !strings.ContainsRune(hanBoundary, c) || mixed && (isAlnum(c) || isSpace(c)) {
				s--
				continue
			}
			break
		}
		for s < at && isSpace(p.at(s)) {
			s++
		}
		if compactKey(p.orig(s, e)) == compactKey(term) {
			return "", false
		}
		return applyEdits(p, []edit{{s, e, term}}), true
	}
	return "", false
}

// phraseEnd reports whether a Chinese noun phrase can end before char e:
// the text ends, or a function word, a question word or a predicate follows
// (保 in 保修期 is not the end of a phrase; 费 in 住宿费的 is).
func (p *text) phraseEnd(e int) bool {
	c := p.at(e)
	if !isHan(c) || strings.ContainsRune(hanBoundary, c) || p.longestAt(hanScaffold, e, len(p.cs)) > 0 {
		return true
	}
	for _, mk := range hanPredicateMarkers {
		if p.hasAt(e, mk) {
			return true
		}
	}
	return false
}

// hanSubject returns the subject of a Chinese question: from its first
// content character to the first predicate marker at least two characters
// later ("年假 | 可以折现吗", "差旅报销 | 要在多少天内提交").
func hanSubject(p *text) (int, int, bool) {
	s0 := 0
	for s0 < len(p.cs) && !isHan(p.at(s0)) && !isAlnum(p.at(s0)) {
		s0++
	}
	for s0 < len(p.cs) {
		if n := p.longestAt(hanScaffold, s0, len(p.cs)); n > 0 && p.longestAt(hanProtected, s0, len(p.cs)) == 0 {
			s0 += n
			continue
		}
		break
	}
	for m := s0 + 2; m < len(p.cs); m++ {
		if !isHan(p.at(m)) {
			if isPunct(p.at(m)) {
				return 0, 0, false
			}
			continue
		}
		for _, mk := range hanPredicateMarkers {
			if p.hasAt(m, mk) {
				for k := s0; k < m; k++ {
					if p.spanAt(k) >= 0 || !isHan(p.at(k)) && !isSpace(p.at(k)) {
						return 0, 0, false
					}
				}
				return s0, m, true
			}
		}
	}
	return 0, 0, false
}
