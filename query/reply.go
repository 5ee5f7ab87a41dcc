package query

import (
	"strings"
)

// RuleClarifyReply: the question answers the clarifying question before it
// ("The Surge one." after "Do you mean Flow or Surge?"): the pending
// question is rewritten with the chosen candidate.
const RuleClarifyReply = "clarify_reply"

// RuleKept: a follow-up whose rewrite would not be sure (a new term with no
// part of the previous question to replace) is kept as asked; the previous
// question's entities go to a retrieval variant instead.
const RuleKept = "kept"

// replyFillers are what a reply to a clarifying question says besides the
// choice ("The Surge one.", "徐家汇店吧", "HT-77830 那个").
var replyFillers = map[string]bool{
	"the": true, "one": true, "that": true, "this": true, "i": true, "mean": true, "meant": true, "please": true,
	"yes": true, "it's": true, "its": true, "a": true, "an": true, "my": true,
}

const hanReplyFillers = "那个这个是吧呀啊哦嗯的就我说指问"

// clarifyReply recognises a reply to the clarifying question that ends the
// window and rewrites the question it was asked about. It reports false
// when the question is not such a reply or the pending question does not
// ask back about the chosen candidate.
func (o Offline) clarifyReply(r Rewrite, question string, q *text, c *conv, win []hmsg, depth int) (Rewrite, bool) {
	if len(win) < 2 || win[len(win)-1].role != "assistant" {
		return r, false
	}
	asked := win[len(win)-1]
	if !strings.ContainsAny(asked.t.src, "?？") {
		return r, false
	}
	// The choice: the question's one identifier or name, offered by the
	// clarifying question.
	var choice *span
	for k := range q.spans {
		s := &q.spans[k]
		if !s.subject() {
			continue
		}
		if choice != nil {
			return r, false
		}
		choice = s
	}
	if choice == nil || !hasEntity(asked.t, choice) || !q.onlyFillers(choice) {
		return r, false
	}
	pend := -1
	for k := len(win) - 2; k >= 0; k-- {
		if win[k].role == "user" {
			pend = k
			break
		}
	}
	if pend < 0 {
		return r, false
	}
	p := win[pend]
	pr := o.rewrite(p.t.src, p.t, c, p.idx, depth)
	if pr.Clarify == nil || pr.Clarify.Mention == "" {
		return r, false
	}
	var value string
	for _, cand := range pr.Clarify.Candidates {
		ct := parse(cand, c.voc)
		if len(ct.spans) > 0 && sameEntity(&ct.spans[0], choice) {
			value = cand
		}
	}
	if value == "" {
		return r, false
	}
	at := strings.Index(p.t.src, pr.Clarify.Mention)
	if at < 0 {
		return r, false
	}
	r.Text = p.t.src[:at] + value + p.t.src[at+len(pr.Clarify.Mention):]
	r.Rule, r.FollowUp = RuleClarifyReply, true
	r.Resolved = append(r.Resolved, Resolution{Mention: pr.Clarify.Mention, Value: value, Turn: asked.idx})
	return finish(r, question, q), true
}

// onlyFillers reports that the text says nothing besides s and filler
// words: it is a choice, not a question of its own.
func (t *text) onlyFillers(s *span) bool {
	for _, tk := range t.tokens() {
		switch tk.kind {
		case tokSpan:
			if &t.spans[tk.span] != s && t.spans[tk.span].subject() {
				return false
			}
		case tokWord:
			if !replyFillers[tk.low] {
				return false
			}
		case tokHan:
			for p := tk.i; p < tk.j; p++ {
				if !strings.ContainsRune(hanReplyFillers, t.at(p)) {
					return false
				}
			}
		}
	}
	return true
}

// namedBefore reports that the window names something of the knowledge
// base's vocabulary (an identifier read by its shape alone is not enough:
// "why did Harvard end its early admission" after a question on P-204
// has its antecedent inside).
func namedBefore(win []hmsg) bool {
	for _, m := range win {
		for k := range m.t.spans {
			if m.t.spans[k].vk != "" {
				return true
			}
		}
	}
	return false
}

// historyVariant is the search key of a kept follow-up: the question, then
// the previous question's entities and keywords (without those of the
// slot the question fills).
func historyVariant(q, p *text, pt []token) []string {
	kw := p.keywords(pt, 0, len(p.cs), conflicts(q))
	if kw == "" {
		return nil
	}
	return []string{q.src + " " + kw}
}

var hanPlaceRefs = lexSet("placeref", "zh")

// placeRefs returns the demonstratives of place in t ("那里", "那儿") as
// references.
func (t *text) placeRefs() []ref {
	var out []ref
	for i := 0; i+1 < len(t.cs); i++ {
		for w := range hanPlaceRefs {
			if n := len([]rune(w)); t.hasAt(i, w) && t.spanAt(i) < 0 {
				out = append(out, ref{i: i, j: i + n})
				i += n - 1
				break
			}
		}
	}
	return out
}
