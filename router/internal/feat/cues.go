package feat

import (
	"strings"
	"unicode/utf8"
)

// Cue lists, read from lexicon/*.tsv. Entries are normalized (lower-case,
// no punctuation). Latin entries match whole words; Han entries match
// anywhere.
var (
	// requestPrefixes wrap a question in a polite request ("do you know
	// who wrote hamlet"). They are stripped only when what follows has
	// substance, so "tell me a joke" stays as it is.
	requestPrefixes = lexList("request")
	cmpCues         = lexList("cmp")
	// contrastCues ask outright to compare subjects: a question holding
	// one needs evidence about each side. Narrower than cmpCues, which
	// also hold comparatives of one fact ("which came first", "more"), and
	// without 比较 alone, which is also the adverb "rather" (比较贵).
	contrastCues = lexList("contrast")
	whyCues      = lexList("why")
	analyzeCues  = lexList("analyze")
	qCues        = lexList("q")
	youCues      = lexList("you")
	meCues       = lexList("me")
	// clauseCues join parts of a compound question; they feed complexity.
	clauseCues = lexList("clause")
	// socialCues are words of social talk: humour, feelings, how the
	// conversation goes. Keyword queries do not use them.
	socialCues = lexList("social")
	commonCues = lexList("common")
	// serviceCues ask an organization for something (opening hours, a
	// price, a booking, a restore), and orgYouCues address it rather than
	// the assistant (你们, 贵公司): "are you open on holidays?" and "你们周末
	// 营业吗" are questions for the knowledge base, not small talk. They
	// are general words of service, no knowledge base's.
	// amountCues ask for a quantity, a time or a count: a look-up.
	amountCues  = lexList("amount")
	serviceCues = lexList("service")
	orgYouCues  = lexList("you.org")
	relWords    = lexSet("rel")
	auxWords    = lexSet("aux")
)

// hasCue reports whether norm contains one of cues (Latin cues on word
// boundaries).
func hasCue(norm string, cues []string) bool {
	for _, c := range cues {
		if containsCue(norm, c) {
			return true
		}
	}
	return false
}

func countCues(norm string, cues []string) int {
	n := 0
	for _, c := range cues {
		if containsCue(norm, c) {
			n++
		}
	}
	return n
}

func containsCue(norm, c string) bool {
	if c == "" {
		return false
	}
	if c[0] >= 0x80 { // Han cue: substring match
		return strings.Contains(norm, c)
	}
	for i := 0; ; {
		j := strings.Index(norm[i:], c)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(c)
		if (j == 0 || !isWordByte(norm[j-1])) && (end == len(norm) || !isWordByte(norm[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// StripGreeting removes leading greeting and filler phrases from normalized
// text: the opener phrases of the small-talk lexicon (greetings, thanks,
// "ok", "请问", "quick question", ...). It returns the rest (maybe empty, and
// always a suffix of norm) and whether anything was removed.
func StripGreeting(norm string) (rest string, stripped bool) {
	rest = norm
	for {
		cut := false
		for _, g := range greetPrefixes {
			if !strings.HasPrefix(rest, g) {
				continue
			}
			after := rest[len(g):]
			if g[0] < 0x80 && after != "" && isWordByte(after[0]) && after[0] < 0x80 {
				continue // "hi" must not eat "history"
			}
			rest = strings.TrimLeft(after, " ")
			cut, stripped = true, true
			break
		}
		if !cut {
			break
		}
	}
	for _, g := range requestPrefixes {
		if !strings.HasPrefix(rest, g) {
			continue
		}
		after := rest[len(g):]
		if g[0] < 0x80 && after != "" && after[0] != ' ' {
			continue // a Latin prefix must end on a word boundary
		}
		after = strings.TrimLeft(after, " ")
		if after != "" && hasSubstance(after) {
			return after, true
		}
		break
	}
	return rest, stripped
}

// hasSubstance reports a question word, a comparison, an analysis cue or
// a word of service.
func hasSubstance(s string) bool {
	return hasCue(s, qCues) || hasCue(s, cmpCues) || hasCue(s, whyCues) || hasCue(s, analyzeCues) || hasCue(s, serviceCues)
}

// Analysis is what the hand-written rules see in a query.
type Analysis struct {
	Norm     string // normalized full text
	Rest     string // Norm without leading greetings
	Greeting bool   // a greeting or filler opener was removed
	Toks     []Token
	Counts   Counts
	Cues     []string // cue feature names, e.g. "cmp", "why", "greet+rest"
	Clauses  int      // clause joiners found
	Compare  bool
	Contrast bool // asks outright to compare subjects (contrastCues)
	// Substance: the rest asks something (question word, yes/no question,
	// comparison), is not about "you", the assistant, and is
	// not only small talk ("how is it going", "有人吗").
	Substance bool
	// Talk is what the small-talk lexicon finds in the whole text (its
	// Conv flag looks at Rest only).
	Talk Talk
	// Chat reports positive evidence of conversation, without which the
	// model may not answer chitchat: the text is only small talk; or it has
	// no identifier (a digit, an error code, a config key) and is mostly
	// small talk (Talk.Mostly), or has a function word in the rest (a pronoun, particle,
	// article, auxiliary, preposition, question word) or a word of social
	// talk (joke, bored, 无聊). Keyword queries ("NIST 800-88", "北京 住宿
	// 标准", "VPN", "CrashLoopBackOff") have none.
	Chat bool
	// Service: the rest asks an organization for something (serviceCues)
	// or addresses it (你们). Such a text is never chitchat unless it is
	// only small talk.
	Service bool
}

// hanSpaced reports Han words separated by a space only ("晚安 套餐"): a
// keyword list, not a sentence.
func hanSpaced(norm string) bool {
	for i := 1; i+1 < len(norm); i++ {
		if norm[i] != ' ' {
			continue
		}
		prev, _ := utf8.DecodeLastRuneInString(norm[:i])
		next, _ := utf8.DecodeRuneInString(norm[i+1:])
		if IsHan(prev) && IsHan(next) {
			return true
		}
	}
	return false
}

func hasHan(s string) bool {
	for _, r := range s {
		if IsHan(r) {
			return true
		}
	}
	return false
}

// Analyze normalizes text and finds its cues. The model features are
// computed from Rest when a greeting was stripped and something remains.
func Analyze(text string) Analysis {
	an := Analysis{Norm: Normalize(text)}
	an.Rest, an.Greeting = StripGreeting(an.Norm)
	body := an.Rest
	if body == "" {
		body = an.Norm
	}
	an.Talk = findTalk(text, an.Norm, len(an.Norm)-len(body))
	an.Service = hasCue(body, serviceCues) || hasCue(body, orgYouCues)
	// A keyword list ("happy hour", "晚安 套餐", "开心果 过敏": Han words
	// apart, or two Latin words without a function word) is no
	// conversation even when one of its words is a social or small-talk
	// word.
	keywords := hanSpaced(body) || !an.Talk.Conv && strings.Count(body, " ") == 1 && !hasHan(body)
	social := hasCue(body, socialCues) && !keywords
	an.Chat = an.Talk.Only || !an.Talk.Ident && !an.Service && (an.Talk.Mostly() && !hanSpaced(body) || an.Talk.Conv || social)
	an.Toks = Tokenize(body)
	an.Counts = CountOf(an.Toks)
	add := func(ok bool, name string) {
		if ok {
			an.Cues = append(an.Cues, name)
		}
	}
	an.Compare = hasCue(body, cmpCues)
	an.Contrast = hasCue(body, contrastCues)
	q := hasCue(body, qCues) || auxQuestion(an.Toks)
	you := hasCue(body, youCues)
	an.Substance = (q || an.Compare || an.Service) && (!you || an.Service) && !an.Talk.Only
	for k := TalkGreeting; k < numTalkKinds; k++ {
		add(an.Talk.Has(k), talkCues[k])
	}
	add(an.Talk.Only, "talk-only")
	add(an.Greeting && an.Rest == "", "greet-only")
	add(an.Greeting && an.Rest != "", "greet+rest")
	add(an.Compare, "cmp")
	add(hasCue(body, whyCues), "why")
	add(hasCue(body, amountCues), "amount")
	add(hasCue(body, analyzeCues), "analyze")
	add(q, "q")
	add(you, "you")
	add(hasCue(body, meCues), "me")
	// Multi-hop shapes that carry across data sets: a choice between two
	// named things, something shared, a relative clause, a chain of
	// possessives.
	add((containsCue(body, "or") && (q || an.Compare)) || strings.Contains(body, "还是"), "choice")
	add(hasCue(body, commonCues), "common")
	add(relativeClause(an.Toks), "relcl")
	add(strings.Count(body, "的") >= 2, "chain")
	an.Clauses = countCues(body, clauseCues)
	add(an.Clauses > 0, "clause")
	return an
}

var talkCues = [numTalkKinds]string{"", "talk:greeting", "talk:thanks", "talk:farewell", "talk:capability", "talk:ack"}

// relativeClause reports a wh-word or "that" after the second word, as in
// "the film that starred ..." or "the college where X studied".
func relativeClause(toks []Token) bool {
	for i := 2; i < len(toks); i++ {
		if !toks[i].Han && relWords[toks[i].Text] {
			return true
		}
	}
	return false
}

// auxQuestion reports a yes/no question: an English auxiliary first, or
// Chinese text ending in a question particle.
func auxQuestion(toks []Token) bool {
	if len(toks) == 0 {
		return false
	}
	if !toks[0].Han && auxWords[toks[0].Text] {
		return true
	}
	last := toks[len(toks)-1]
	return last.Han && (strings.HasSuffix(last.Text, "吗") || strings.HasSuffix(last.Text, "么"))
}
