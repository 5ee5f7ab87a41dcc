package nodes

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/state"
)

// Texts are the fixed replies of the offline pipeline, per language.
type Texts struct {
	ZH, EN Lang
}

// Lang holds the fixed replies in one language.
type Lang struct {
	Chitchat string // reply to small talk when no model is configured
	NotFound string // reply when the knowledge base has nothing relevant
	Lead     string // opens an extractive answer
}

// DefaultTexts returns the built-in replies.
func DefaultTexts() Texts {
	return Texts{
		ZH: Lang{
			Chitchat: "你好！我是知识库助手，可以帮你查询报销、差旅、请假、售后退换货、IT 与 VPN、会议室等公司制度。请直接告诉我你的问题。",
			NotFound: "知识库中没有找到与这个问题相关的内容，我不能凭空作答。可以换个说法，或联系相关部门确认。",
			Lead:     "根据知识库：",
		},
		EN: Lang{
			Chitchat: "Hello! I'm the knowledge-base assistant. I can look up company policies on expenses, travel, leave, returns and after-sales, IT and VPN, and meeting rooms. What would you like to know?",
			NotFound: "I could not find anything about this in the knowledge base, so I won't guess. Try rephrasing, or check with the team responsible.",
			Lead:     "From the knowledge base:",
		},
	}
}

func (t Texts) pick(question string) Lang {
	if isCJK(question) {
		return t.ZH
	}
	return t.EN
}

func isCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func chitchatPrompt(s state.RAG) []llm.Message {
	return []llm.Message{
		{Role: "system", Content: "You are the friendly assistant of a company knowledge base. Reply briefly and warmly to small talk, " +
			"in the user's language, and say what you can help with (company policies: expenses, travel, leave, returns, IT, meeting rooms). " +
			"Never state any company fact, number, rule or policy: you have not looked anything up."},
		{Role: "user", Content: s.Question},
	}
}

// context text limits when the plan sets none.
const (
	defaultMaxContextChars    = 6000
	defaultMaxContextDocChars = 1500
)

func (p *Pipeline) contextLimits(s *state.RAG) (total, perDoc int) {
	total, perDoc = defaultMaxContextChars, defaultMaxContextDocChars
	if s.Plan != nil {
		if s.Plan.MaxContextChars > 0 {
			total = s.Plan.MaxContextChars
		}
		if s.Plan.MaxContextDocChars > 0 {
			perDoc = s.Plan.MaxContextDocChars
		}
	}
	return total, perDoc
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// generate answers from s.Docs: through the model when one is configured,
// otherwise extractively. No passages means a plain "not found", never an
// invented answer.
func (p *Pipeline) generate(ctx context.Context, s state.RAG) (state.RAG, error) {
	texts := p.cfg.Texts.pick(s.Question)
	if len(s.Docs) == 0 {
		s.Answer, s.Citations, s.AnsweredBy = texts.NotFound, nil, NodeGenerate
		return s, nil
	}
	if p.gen == nil {
		// Wider contexts (analytical) synthesise from more passages.
		maxSent := 3
		if len(s.Docs) > 3 {
			maxSent = 5
		}
		s.Answer, s.Citations = extractive(p.analyzer, s.Query.Text, s.Docs, texts, maxSent)
		s.AnsweredBy = "extractive"
		return s, nil
	}
	msgs := p.ragPrompt(&s)
	resp, err := p.gen.Generate(ctx, llm.Request{Messages: msgs, MaxTokens: p.cfg.MaxAnswerTokens})
	AddTokens(ctx, resp.Usage)
	if err != nil {
		return s, fmt.Errorf("generate: %w", err)
	}
	s.Answer = strings.TrimSpace(resp.Text)
	s.Citations = citationsIn(s.Answer, s.Docs)
	s.AnsweredBy = NodeGenerate
	return s, nil
}

func (p *Pipeline) ragPrompt(s *state.RAG) []llm.Message {
	total, perDoc := p.contextLimits(s)
	var b strings.Builder
	used := 0
	for i, h := range s.Docs {
		text := truncateRunes(h.Chunk.Text, perDoc)
		if used > 0 && used+utf8.RuneCountInString(text) > total {
			break
		}
		used += utf8.RuneCountInString(text)
		fmt.Fprintf(&b, "[%d] (%s) %s\n%s\n\n", i+1, h.Chunk.Source, h.Chunk.Title, text)
	}
	sys := "You answer questions about a company's policies using ONLY the numbered passages provided. " +
		"Cite every statement with the passage number in square brackets, like [1] or [2][3]. " +
		"If the passages do not contain the answer, say that the knowledge base does not cover it; never invent facts, numbers or rules. " +
		"Answer in the language of the question, concisely."
	user := "Passages:\n\n" + b.String() + "Question: " + s.Question
	msgs := []llm.Message{{Role: "system", Content: sys}}
	for _, h := range s.History {
		msgs = append(msgs, llm.Message{Role: "user", Content: h})
	}
	return append(msgs, llm.Message{Role: "user", Content: user})
}

var citeRE = regexp.MustCompile(`\[(\d{1,2})\]`)

// citationsIn lists the passages an answer cites, in order of first use.
func citationsIn(answer string, docs []retrieval.Hit) []state.Citation {
	var out []state.Citation
	seen := map[int]bool{}
	for _, m := range citeRE.FindAllStringSubmatch(answer, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(docs) || seen[n] {
			continue
		}
		seen[n] = true
		c := docs[n-1].Chunk
		out = append(out, state.Citation{N: n, ID: c.ID, Source: c.Source, Title: c.Title})
	}
	return out
}

// sentence is a candidate for the extractive answer.
type sentence struct {
	doc   int // index in docs
	pos   int // order within the doc
	text  string
	score float64
}

// extractive builds an answer from the passages' best sentences: each
// sentence scores the idf-weighted share of the question's terms it
// contains, with a small prior for better-ranked passages. Up to maxSent
// sentences are kept (at most two from one passage, so that a comparison
// draws on both sides), each followed by its citation. Headings and
// questions are not evidence and are never quoted. When no sentence
// shares a term with the question, the answer is "not found": an
// extractive answer must never quote unrelated text as if it answered.
func extractive(analyzer analysis.Analyzer, question string, docs []retrieval.Hit, t Lang, maxSent int) (string, []state.Citation) {
	qterms := map[string]bool{}
	for _, tok := range analyzer.Tokens(question) {
		if !stopword(tok) {
			qterms[tok] = true
		}
	}
	// Document frequency of each question term over the passages' sentences.
	var sents []sentence
	for i, h := range docs {
		text := strings.TrimPrefix(h.Chunk.Text, h.Chunk.Title)
		if a := h.Chunk.Meta["answer"]; a != "" {
			text = a // an FAQ entry: its answer is the evidence
		}
		for j, st := range splitSentences(text) {
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
		for _, tok := range analyzer.Tokens(st.text) {
			if qterms[tok] && !toks[i][tok] {
				toks[i][tok] = true
				df[tok]++
			}
		}
	}
	var total float64
	idf := map[string]float64{}
	for tok := range qterms {
		idf[tok] = 1 / float64(1+df[tok])
		total += idf[tok]
	}
	for i := range sents {
		var s float64
		for tok := range toks[i] {
			s += idf[tok]
		}
		if total > 0 && s > 0 {
			sents[i].score = s/total + 0.05/float64(1+sents[i].doc)
		}
	}
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
	if isCJK(question) {
		sep = ""
	}
	for _, st := range keep {
		fmt.Fprintf(&b, "%s%s [%d]", sep, strings.TrimSpace(st.text), st.doc+1)
		if !cited[st.doc] {
			cited[st.doc] = true
			c := docs[st.doc].Chunk
			cites = append(cites, state.Citation{N: st.doc + 1, ID: c.ID, Source: c.Source, Title: c.Title})
		}
	}
	return b.String(), cites
}

// splitSentences cuts text after sentence punctuation (CJK and Latin) and
// at line breaks, dropping heading markers.
func splitSentences(text string) []string {
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

// stopword drops question scaffolding that would match any sentence.
func stopword(tok string) bool {
	switch tok {
	case "the", "a", "an", "is", "are", "do", "does", "i", "to", "of", "in", "for", "what", "how", "when", "which", "who", "can", "my", "me", "and", "or", "on", "it", "be",
		"的", "了", "吗", "呢", "是", "什么", "怎么", "多少", "哪些", "要", "在", "我", "你", "请", "问", "下", "几", "？":
		return true
	}
	return false
}
