package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Errors of the package.
var (
	// ErrRewriteFailed reports that a model rewrite (or variant, or
	// hypothetical passage) could not be used: the call failed, timed out,
	// or its answer was malformed or rejected. The caller keeps the
	// original question. A timeout also matches context.DeadlineExceeded.
	ErrRewriteFailed = errors.New("query: rewrite failed")
	// ErrRewriteRejected reports a candidate rewrite that changes what the
	// user asked: it drops, swaps or adds an entity or a number. The error
	// is a *RejectError naming it.
	ErrRewriteRejected = errors.New("query: rewrite rejected")
)

// RejectError says why Check rejected a candidate. It matches
// ErrRewriteRejected.
type RejectError struct {
	// Op is "drop" (an entity or number of the question is missing), "swap"
	// (it was replaced by another of the same kind), "add" (an entity
	// neither the question nor the history gives) or "empty".
	Op string
	// Entity is the entity or number concerned, as the user (for drop and
	// swap) or the candidate (for add) wrote it.
	Entity string
	// By is what replaced Entity (swap only).
	By string
}

// Error names the operation and the entity.
func (e *RejectError) Error() string {
	switch e.Op {
	case "swap":
		return fmt.Sprintf("query: rewrite rejected: swaps %q for %q", e.Entity, e.By)
	case "drop":
		return fmt.Sprintf("query: rewrite rejected: drops %q", e.Entity)
	case "add":
		return fmt.Sprintf("query: rewrite rejected: adds %q, which neither the question nor the history gives", e.Entity)
	}
	return "query: rewrite rejected: empty rewrite"
}

// Is makes a *RejectError match ErrRewriteRejected.
func (e *RejectError) Is(target error) bool { return target == ErrRewriteRejected }

// Check validates a candidate rewrite of question against the question and
// the history. It returns a *RejectError (matching ErrRewriteRejected) when
// the candidate
//
//   - drops an entity or number the user gave (40 days is gone),
//   - swaps one for another of the same kind (P-205 became P-204; 40 days
//     became 30 days), or
//   - adds one that neither the question nor the history supports.
//
// Entities compare by meaning, not spelling: P-204 = P204, 三十天 = 30 天 =
// 30 days, 2万元 = 20,000元, 去年 = last year. It is used on model rewrites,
// model variants and, without the "add" rule for numbers and times, on
// hypothetical passages.
func Check(question string, history []Message, candidate string) error {
	return CheckWith(nil, question, history, candidate)
}

// CheckWith is Check with the names of a knowledge base's vocabulary (nil:
// none) as entities. It also refuses a candidate that keeps a name of the
// history beside the question's new name of the same kind ("What about
// Flow?" after a question on Spark must not become a question on both),
// unless the question refers back ("它和 P-205 比呢").
func CheckWith(v Vocabulary, question string, history []Message, candidate string) error {
	hs := make([]*text, 0, len(history))
	for _, m := range history {
		hs = append(hs, parse(m.Content, v))
	}
	return check(parse(question, v), hs, parse(candidate, v), false)
}

// check implements Check. In a passage (passage true) numbers and times the
// passage states are allowed; identifiers are not.
func check(q *text, hs []*text, c *text, passage bool) error {
	if strings.TrimSpace(c.src) == "" {
		return &RejectError{Op: "empty"}
	}
	for k := range q.spans {
		qs := &q.spans[k]
		if hasEntity(c, qs) || slices.ContainsFunc(q.spans[:k], func(o span) bool { return sameEntity(&o, qs) }) {
			continue
		}
		for m := range c.spans {
			cs := &c.spans[m]
			if (cs.kind == qs.kind || cs.subject() && qs.subject()) && !hasEntity(q, cs) {
				return &RejectError{Op: "swap", Entity: qs.value, By: cs.value}
			}
		}
		return &RejectError{Op: "drop", Entity: qs.value}
	}
	for m := range c.spans {
		cs := &c.spans[m]
		if hasEntity(q, cs) || passage && !cs.subject() {
			continue
		}
		if slices.ContainsFunc(hs, func(h *text) bool { return hasEntity(h, cs) }) {
			if old := keptBeside(q, cs); old != "" && !passage {
				return &RejectError{Op: "keep", Entity: cs.value, By: old}
			}
			continue
		}
		return &RejectError{Op: "add", Entity: cs.value}
	}
	if !passage {
		if w, n := splitName(q, c); w != "" {
			return &RejectError{Op: "split", Entity: w + " " + n}
		}
	}
	return nil
}

// splitName finds a bare number the question writes after a word ("iPhone
// 15", "Model 3") that the candidate keeps without that word before it
// ("the Pixel 15"): the word and the number are one name, and a splice
// that moves the number alone makes a name nobody said.
func splitName(q, c *text) (string, string) {
	for k := range q.spans {
		qs := &q.spans[k]
		if qs.kind != Number || qs.unit != "" {
			continue
		}
		w := q.wordBefore(qs.i)
		if w == "" || stopWords[w] || prepositions[w] {
			continue
		}
		kept := false
		for m := range c.spans {
			if cs := &c.spans[m]; sameEntity(cs, qs) && c.wordBefore(cs.i) == w {
				kept = true
				break
			}
		}
		if !kept {
			return w, qs.value
		}
	}
	return "", ""
}

// wordBefore returns the folded Latin word that ends right before char i
// (spaces between allowed), "" when there is none.
func (t *text) wordBefore(i int) string {
	e := i
	for e > 0 && isSpace(t.at(e-1)) {
		e--
	}
	b := e
	for b > 0 && isLetter(t.at(b-1)) {
		b--
	}
	if b == e || b > 0 && isAlnum(t.at(b-1)) {
		return ""
	}
	return t.folded(b, e)
}

// keptBeside returns the question's name that the history's name s (not in
// the question) stands beside with the same kind, when the question does
// not refer back; "" otherwise. Only names of a vocabulary and identifiers
// of one letter prefix have a kind sure enough for this.
func keptBeside(q *text, s *span) string {
	if !s.subject() {
		return ""
	}
	keys := s.kindKeys()
	if s.vk == "" {
		keys = keys[1:] // the prefix, not the guessed kind
	}
	if len(keys) == 0 {
		return ""
	}
	for k := range q.spans {
		qs := &q.spans[k]
		if !qs.subject() || sameEntity(qs, s) {
			continue
		}
		for _, a := range qs.kindKeys() {
			if slices.Contains(keys, a) {
				if len(q.refs(q.tokens())) > 0 {
					return ""
				}
				return qs.value
			}
		}
	}
	return ""
}
