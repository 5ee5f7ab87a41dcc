package nodes

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// faqCovers reports whether an FAQ entry's question says everything the
// user's question says: every content word (English, by stem; numbers as
// written) and every content character (Chinese) of the question is in the
// entry's question. A direct answer skips retrieval and is quoted as it is,
// so a near miss must not take it: "How many days of paternity leave do I
// get?" is not "How many days of annual leave do I get?", however similar
// their vectors. A question that fails goes on to retrieval, where the entry
// is still evidence.
func faqCovers(an analysis.Analyzer, question, faq string) bool {
	have := map[string]bool{}
	for _, tok := range an.Tokens(faq) {
		have[faqKey(tok)] = true
	}
	for _, tok := range an.Tokens(question) {
		if utf8.RuneCountInString(tok) > 1 && isHan(tok) {
			continue // CJK bigrams: the characters decide
		}
		if faqScaffold(tok) {
			continue
		}
		if !have[faqKey(tok)] {
			return false
		}
	}
	return true
}

func faqKey(tok string) string {
	if isHan(tok) {
		return tok
	}
	return stem(tok)
}

func isHan(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	return unicode.Is(unicode.Han, r)
}

// faqScaffold are the words and characters of a question that say how it
// asks, not what: two ways of asking the same thing differ in them.
func faqScaffold(tok string) bool {
	if isHan(tok) {
		return strings.Contains(faqScaffoldHan, tok)
	}
	return stopword(tok) || faqScaffoldEN[tok]
}

const faqScaffoldHan = "的了吗呢吧啊呀嘛么是有在我你您咱们要能会可以需怎么样什么啥多少几哪请问下个和与及或还也都就又再才谁为何如该应想知道一"

var faqScaffoldEN = map[string]bool{
	"was": true, "were": true, "did": true, "where": true, "why": true, "whom": true, "could": true, "should": true,
	"would": true, "will": true, "we": true, "our": true, "you": true, "your": true, "its": true, "get": true,
	"got": true, "have": true, "has": true, "had": true, "there": true, "this": true, "that": true, "with": true,
	"at": true, "by": true, "about": true, "any": true, "some": true, "much": true, "many": true, "please": true,
	"tell": true, "know": true, "need": true, "want": true, "am": true, "may": true, "if": true, "so": true,
	"must": true, "might": true, "shall": true, "ever": true, "also": true, "still": true, "just": true,
}
