package nodes

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/state"
)

// referenceExtractive is the extractive answer as first written, with a
// map of terms per sentence; the bitset version must answer exactly as it
// does.
func referenceExtractive(tm *termMemo, question string, docs []retrieval.Hit, nums []int, t Wording, maxSent int, cjk bool, asked string) (string, []state.Citation) {
	num := func(i int) int {
		if nums != nil {
			return nums[i]
		}
		return i + 1
	}
	// Passage texts repeat from question to question; their terms come
	// from the memo (read only).
	terms := tm.terms
	qterms := map[string]bool{}
	for _, tok := range tm.fresh(question) {
		if !stopword(tok) {
			qterms[tok] = true
		}
	}
	// A passage's heading path says what its sentences are about: its terms
	// count for every sentence that matches the question by itself.
	// An FAQ entry's answer answers its question, so the question's terms
	// count for every sentence of the answer, matching or not ("5 days with
	// 1 to 10 years…" answers "how many days of annual leave…").
	titleTerms := make([]map[string]bool, len(docs))
	faqTerms := make([]map[string]bool, len(docs))
	for i, h := range docs {
		titleTerms[i] = map[string]bool{}
		for _, tok := range terms(h.Chunk.Title) {
			if qterms[tok] {
				titleTerms[i][tok] = true
			}
		}
		if q := h.Chunk.Meta[retrieval.MetaQuestion]; q != "" && h.Chunk.Meta[retrieval.MetaAnswer] != "" {
			faqTerms[i] = map[string]bool{}
			for _, tok := range terms(q) {
				if qterms[tok] {
					faqTerms[i][tok] = true
				}
			}
		}
	}
	// Document frequency of each question term over the passages' sentences.
	var sents []sentence
	for i, h := range docs {
		text := strings.TrimPrefix(h.Chunk.Text, h.Chunk.Title)
		if a := strings.TrimSpace(h.Chunk.Meta[retrieval.MetaAnswer]); a != "" {
			// An FAQ entry: its answer is the evidence, and a short one is
			// quoted whole ("不需要。" alone would mean nothing).
			if utf8.RuneCountInString(a) <= maxWholeFAQAnswer {
				sents = append(sents, sentence{doc: i, text: a})
				continue
			}
			text = a
		}
		if h.Chunk.ContentType == retrieval.ContentTableRow {
			if body := rowBody(h.Chunk.Text); body != "" {
				sents = append(sents, sentence{doc: i, text: body, row: true})
			}
			continue
		}
		for j, st := range referenceSplitSentences(dropTableHeaders(text)) {
			if strings.HasSuffix(st, "？") || strings.HasSuffix(st, "?") || strings.Contains(st, " > ") {
				continue
			}
			sents = append(sents, sentence{doc: i, pos: j, text: st})
		}
	}
	df := map[string]int{}
	toks := make([]map[string]bool, len(sents))
	for i, st := range sents {
		toks[i] = map[string]bool{}
		for _, tok := range terms(st.text) {
			if qterms[tok] && !toks[i][tok] {
				toks[i][tok] = true
				df[tok]++
			}
		}
		for tok := range faqTerms[st.doc] {
			if !toks[i][tok] {
				toks[i][tok] = true
				df[tok]++
			}
		}
		if len(toks[i]) > 0 {
			for tok := range titleTerms[st.doc] {
				toks[i][tok] = true
			}
		}
	}
	// A passage whose sentences share no term with the question but whose
	// heading does is about what was asked (the section "EX-14 Address not
	// found" for "what does EX-14 mean?"): its first sentences carry the
	// heading's terms.
	matched := make([]bool, len(docs))
	for i, st := range sents {
		matched[st.doc] = matched[st.doc] || len(toks[i]) > 0
	}
	for i, st := range sents {
		if matched[st.doc] || st.pos >= headingSentences || st.row {
			continue
		}
		for tok := range titleTerms[st.doc] {
			if !toks[i][tok] {
				toks[i][tok] = true
				df[tok]++
			}
		}
	}
	// Sum over the query terms in a fixed order: map order would change
	// the floating-point sums, and with them how ties between sentences
	// break, from one run to the next.
	order := slices.Sorted(maps.Keys(qterms))
	var total float64
	idf := map[string]float64{}
	for _, tok := range order {
		idf[tok] = 1 / float64(1+df[tok])
		total += idf[tok]
	}
	for i := range sents {
		var s float64
		for _, tok := range order {
			if toks[i][tok] {
				s += idf[tok]
			}
		}
		if total > 0 && s > 0 {
			sents[i].score = s/total + 0.05/float64(1+sents[i].doc)
		}
	}
	namedRowsOnly(append(recordIDs(question), recordIDs(asked)...), docs, sents)
	best := slices.Clone(sents)
	slices.SortStableFunc(best, func(a, b sentence) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	// A sentence far weaker than the best one adds noise, not evidence;
	// a synthesis (more sentences) tolerates weaker ones.
	cutoff := 0.5
	if maxSent > 3 {
		cutoff = 0.3
	}
	var keep []sentence
	perDoc := map[int]int{}
	for _, st := range best {
		if st.score <= 0 || len(keep) == maxSent {
			break
		}
		if len(keep) > 0 && st.score < cutoff*keep[0].score {
			break
		}
		if perDoc[st.doc] == 2 {
			continue
		}
		perDoc[st.doc]++
		keep = append(keep, st)
	}
	if len(keep) == 0 {
		return t.NotFound, nil
	}
	slices.SortFunc(keep, func(a, b sentence) int {
		if a.doc != b.doc {
			return a.doc - b.doc
		}
		return a.pos - b.pos
	})
	var b strings.Builder
	b.WriteString(t.Lead)
	cited := map[int]bool{}
	var cites []state.Citation
	sep := " "
	if cjk {
		sep = ""
	}
	for _, st := range keep {
		text := strings.TrimSpace(st.text)
		if st.row {
			text = quoteRow(text, func(cell string) bool {
				for _, tok := range terms(cell) {
					if qterms[tok] {
						return true
					}
				}
				return false
			})
		}
		fmt.Fprintf(&b, "%s%s [%d]", sep, text, num(st.doc))
		if !cited[st.doc] {
			cited[st.doc] = true
			cites = append(cites, state.CitationOf(num(st.doc), docs[st.doc]))
		}
	}
	return b.String(), cites
}

// referenceSplitSentences is splitSentences as first written, rune by
// rune through a builder.
func referenceSplitSentences(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		s := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(cur.String()), "#>-* "))
		if utf8.RuneCountInString(s) >= 4 {
			out = append(out, s)
		}
		cur.Reset()
	}
	rs := []rune(text)
	for i, r := range rs {
		if r == '\n' {
			flush()
			continue
		}
		cur.WriteRune(r)
		switch r {
		case '。', '！', '？', '；', '!', '?', ';':
			flush()
		case '.':
			if i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\n' {
				flush()
			}
		}
	}
	flush()
	return out
}

// sampleChunks loads the sample knowledge base and the test knowledge
// bases as passages: prose, table rows and FAQ entries.
func sampleChunks(t *testing.T) []retrieval.Chunk {
	t.Helper()
	var all []retrieval.Chunk
	for _, fsys := range []fs.FS{samplekb.FS(), os.DirFS("../../testdata/kbs")} {
		cs, _, err := ingest.LoadFS(context.Background(), fsys, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cs...)
	}
	if len(all) < 50 {
		t.Fatalf("only %d chunks loaded", len(all))
	}
	return all
}

// The extractive answer with bitsets answers exactly as the map-based one
// did: the same text and citations for questions in both languages over
// random sets of passages (prose, table rows, FAQ entries), shared passages
// included.
func TestExtractiveMatchesReference(t *testing.T) {
	chunks := sampleChunks(t)
	var questions []string
	for _, c := range chunks {
		if q := c.Meta[retrieval.MetaQuestion]; q != "" {
			questions = append(questions, q)
		}
	}
	questions = append(questions, "？", "")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		// A sentence of a passage, and a heading path (which names record
		// ids in the tables' sections) joined to another passage's title.
		c, d := chunks[rng.IntN(len(chunks))], chunks[rng.IntN(len(chunks))]
		if ss := referenceSplitSentences(c.Text); len(ss) > 0 {
			questions = append(questions, ss[rng.IntN(len(ss))])
		}
		questions = append(questions, c.Meta[retrieval.MetaLocator]+" "+d.Title+"?")
	}
	an := analysis.Default()
	memo, fresh := newTermMemo(an, defaultTermMemo), newTermMemo(an, 0)
	texts := DefaultTexts().withDefaults()
	differ, quoted := 0, 0
	for i, q := range questions {
		n := 1 + rng.IntN(10)
		docs := make([]retrieval.Hit, n)
		for j := range docs {
			docs[j] = retrieval.Hit{Chunk: chunks[rng.IntN(len(chunks))], Score: 1 / float64(j+1)}
		}
		if i%7 == 0 {
			docs = append(docs, docs[0]) // a passage twice
		}
		var nums []int
		if i%3 == 0 {
			for j := range docs {
				nums = append(nums, 2*j+1)
			}
		}
		lang := texts.lang(langOf(q))
		for _, maxSent := range []int{3, 5} {
			asked := ""
			if i%2 == 0 {
				asked = questions[(i+1)%len(questions)]
			}
			got, gotC := extractive(memo, q, docs, nums, lang, maxSent, langOf(q) == "zh", asked)
			want, wantC := referenceExtractive(fresh, q, docs, nums, lang, maxSent, langOf(q) == "zh", asked)
			if got != want || !reflect.DeepEqual(gotC, wantC) {
				differ++
				if differ <= 3 {
					t.Errorf("%q (%d passages, %d sentences):\n got %q %v\nwant %q %v", q, len(docs), maxSent, got, gotC, want, wantC)
				}
			}
			if len(wantC) > 0 {
				quoted++
			}
		}
	}
	t.Logf("%d chunks, %d questions, %d answers quote passages", len(chunks), len(questions), quoted)
	if differ > 0 {
		t.Errorf("%d of %d answers differ", differ, 2*len(questions))
	}
	if quoted < len(questions)/2 {
		t.Errorf("only %d of %d answers quote anything: the comparison says little", quoted, 2*len(questions))
	}
}

// splitSentences gives the sentences the rune-by-rune version gave, on
// every passage of the sample knowledge bases and on edge cases (invalid
// UTF-8, markers, a final full stop, CRLF).
func TestSplitSentencesMatchesReference(t *testing.T) {
	texts := []string{"", "a.b. c", "# 标题\n- 第一条。第二条！\n\n> 引用；结束", "ab\xffcd。ef\xfe\xfegh.", "end.", "Mr. Smith. Done.\r\nNext line",
		"数字 3.5 和 4. 以及", "????", "**粗体**：说明。"}
	for _, c := range sampleChunks(t) {
		texts = append(texts, c.Text, dropTableHeaders(c.Text))
	}
	for _, s := range texts {
		if got, want := splitSentences(s), referenceSplitSentences(s); !reflect.DeepEqual(got, want) {
			t.Errorf("splitSentences(%q)\n got %q\nwant %q", s, got, want)
		}
	}
}
