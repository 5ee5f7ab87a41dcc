package feat

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// TalkKind is the kind of a small-talk phrase.
type TalkKind uint8

// Small-talk kinds. TalkNone means no small-talk phrase.
const (
	TalkNone       TalkKind = iota
	TalkGreeting            // hello, 你好, good morning, how are you
	TalkThanks              // thanks, 谢谢, much appreciated
	TalkFarewell            // bye, 再见, good night, take care
	TalkCapability          // about the assistant itself: what can you do, 你是谁
	TalkAck                 // acknowledgements and reactions: ok, got it, 好的, haha
	numTalkKinds
)

// talkGroup is a list of phrases of one kind. Phrases are written as a user
// types them and normalized when the index is built. Latin phrases match
// whole words; Han phrases match anywhere in a Han run, longest first.
type talkGroup struct {
	kind TalkKind
	// lead: the group's phrases are openers that StripGreeting removes in
	// front of a question (Han phrases of one character only when listed
	// in leadSingles).
	lead    bool
	phrases []string
}

// talkLexicon is the one small-talk lexicon of the product: the offline
// router's greeting stripping, its small-talk cues and chitchat gate, and
// router.DetectSmallTalk all read it (lexicon/*.tsv, classes talk.KIND,
// talk.KIND.lead, opener and filler). A phrase must be small talk wherever
// it appears; words that also name things (a "morning shift", "great wall")
// are fine only because a text is small talk as a whole just when nothing
// else remains.
var talkLexicon = talkGroups()

// talkClassKinds maps a lexicon class to its kind; the .lead variants are
// openers as well.
var talkClassKinds = map[string]TalkKind{
	"talk.greeting": TalkGreeting, "talk.thanks": TalkThanks, "talk.farewell": TalkFarewell,
	"talk.capability": TalkCapability, "talk.ack": TalkAck, "opener": TalkNone, "filler": TalkNone,
}

func talkGroups() []talkGroup {
	var out []talkGroup
	idx := map[string]int{}
	for _, e := range lexEntries {
		class, lead := strings.CutSuffix(e.Class, ".lead")
		lead = lead || class == "opener"
		kind, ok := talkClassKinds[class]
		if !ok {
			continue
		}
		i, seen := idx[e.Class]
		if !seen {
			i = len(out)
			idx[e.Class] = i
			out = append(out, talkGroup{kind: kind, lead: lead})
		}
		out[i].phrases = append(out[i].phrases, e.Entry)
	}
	return out
}

// leadSingles are the one-character Han openers that StripGreeting removes;
// other one-character phrases ("早", "好") begin too many real questions.
var leadSingles = lexSet("leadsingle")

// convWords are function words (class function, Latin): pronouns, articles
// and determiners, auxiliaries, prepositions, conjunctions, question words
// and a few adverbs. A sentence has some; a keyword query ("expense limit
// travel", "NIST 800-88", "VPN") has none.
var convWords = lexSet("function")

// convHan are Han pronouns, particles, question words and other function
// characters of a sentence (class function, one character each). 么 counts
// only at the end (it also ends 什么, 怎么, which 什 and 怎 cover).
// Characters that often start nouns (个税, 成都, 还款, 地址) are left out.
var convHan = hanSet(lexList("function"))

func hanSet(es []string) map[rune]bool {
	m := map[rune]bool{}
	for _, e := range es {
		if r, n := utf8.DecodeRuneInString(e); n == len(e) && r >= 0x80 {
			m[r] = true
		}
	}
	return m
}

// talkEmoji are the emoji that say something by themselves; others are
// decoration.
var talkEmoji = map[rune]TalkKind{
	0x1F44B: TalkGreeting, // waving hand
	0x1F64F: TalkThanks,   // folded hands
	0x1F44D: TalkAck,      // thumbs up
	0x1F44C: TalkAck,      // OK hand
}

type talkEntry struct{ kind TalkKind }

var (
	talkIndex     = map[uint64]talkEntry{}
	talkVocab     = map[string]bool{} // Latin words of the lexicon
	talkMaxWords  int
	talkMaxRunes  int
	greetPrefixes []string // lead phrases, longest first
)

func init() {
	for _, g := range talkLexicon {
		for _, p := range g.phrases {
			n := Normalize(p)
			if n == "" {
				continue
			}
			// A phrase listed under a kind and as a filler keeps its kind.
			if old, ok := talkIndex[hash64(n)]; !ok || old.kind == TalkNone {
				talkIndex[hash64(n)] = talkEntry{kind: g.kind}
			}
			if n[0] < 0x80 {
				ws := strings.Split(n, " ")
				talkMaxWords = max(talkMaxWords, len(ws))
				for _, w := range ws {
					talkVocab[w] = true
				}
			} else {
				talkMaxRunes = max(talkMaxRunes, utf8.RuneCountInString(n))
			}
			if g.lead && (n[0] < 0x80 || utf8.RuneCountInString(n) > 1 || leadSingles[n]) {
				greetPrefixes = append(greetPrefixes, n)
			}
		}
	}
	sort.SliceStable(greetPrefixes, func(i, j int) bool { return len(greetPrefixes[i]) > len(greetPrefixes[j]) })
}

// FNV-1a, 64 bit, for lexicon keys (words joined by one space, or a Han
// string); hashing lets the scan look phrases up without building strings.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

func hash64(s string) uint64 { return hadd(offset64, s) }

func hadd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

// Talk is what the small-talk lexicon finds in a text.
type Talk struct {
	// Kind is the kind of the first small-talk phrase (TalkNone if none).
	Kind TalkKind
	// Kinds has bit 1<<k set for every kind k found.
	Kinds uint8
	// Only: at least one small-talk phrase, and nothing is left once the
	// small-talk phrases, fillers, openers, punctuation and emoji are
	// removed (no other word, no Han character, no number).
	Only bool
	// Conv: the part from the scan's body offset on has a function word
	// (see convWords, convHan) outside the small-talk phrases.
	Conv bool
	// Ident: the text has an identifier-shaped token: a digit, or letters
	// joined by "_", "." or "@" (error codes, ids, config keys, hosts).
	Ident bool
	// restUnits measures what is not small talk: 3 a Latin word, 1 a Han
	// character.
	restUnits int
}

// Mostly reports small talk with at most one other word (a name: "hi
// Alexa", "你好天猫精灵"): a small-talk phrase, and besides it at most one
// Latin word or four Han characters.
func (t Talk) Mostly() bool { return t.Kinds != 0 && t.restUnits <= 4 }

// Has reports whether a phrase of kind k was found.
func (t Talk) Has(k TalkKind) bool { return t.Kinds&(1<<k) != 0 }

// FindTalk scans text (as typed) for small talk. It normalizes text itself.
func FindTalk(text string) Talk { return findTalk(text, Normalize(text), 0) }

// findTalk scans norm (Normalize(text)); Conv looks only at norm[body:].
func findTalk(text, norm string, body int) Talk {
	var t Talk
	emoji, first := raw(text, &t)
	rest := 0
	found := func(e talkEntry) {
		if e.kind == TalkNone {
			return
		}
		if t.Kind == TalkNone {
			t.Kind = e.kind
		}
		t.Kinds |= 1 << e.kind
	}
	restHan := 0
	var words [16]string
	var starts [16]int
	for i := 0; i < len(norm); {
		if norm[i] == ' ' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(norm[i:])
		if IsHan(r) {
			j := i + size
			for j < len(norm) {
				r2, s2 := utf8.DecodeRuneInString(norm[j:])
				if !IsHan(r2) {
					break
				}
				j += s2
			}
			n := scanHan(norm, i, j, body, &t, found)
			rest += n
			restHan += n
			i = j
			continue
		}
		// A run of Latin words (letters and digits), up to len(words).
		n := 0
		for i < len(norm) && n < len(words) {
			j := i
			for j < len(norm) && norm[j] != ' ' {
				r2, s2 := utf8.DecodeRuneInString(norm[j:])
				if IsHan(r2) {
					break
				}
				j += s2
			}
			words[n], starts[n] = canonWord(norm[i:j]), i
			n++
			i = j
			if i < len(norm) && norm[i] == ' ' && i+1 < len(norm) {
				if r2, _ := utf8.DecodeRuneInString(norm[i+1:]); !IsHan(r2) {
					i++
					continue
				}
			}
			break
		}
		rest += scanWords(words[:n], starts[:n], body, &t, found)
	}
	t.Only = rest == 0 && t.Kinds != 0 || norm == "" && emoji != 0
	t.restUnits = 3*(rest-restHan) + restHan
	if t.Kind == TalkNone {
		t.Kind = first
	}
	t.Kinds |= emoji
	return t
}

// scanWords consumes Latin words by the longest lexicon phrase at each
// position and returns how many words are left over.
func scanWords(ws []string, starts []int, body int, t *Talk, found func(talkEntry)) int {
	rest := 0
	for p := 0; p < len(ws); {
		best, be := 0, talkEntry{}
		h := uint64(offset64)
		for q := p; q < len(ws) && q-p < talkMaxWords; q++ {
			if q > p {
				h = hadd(h, " ")
			}
			h = hadd(h, ws[q])
			if e, ok := talkIndex[h]; ok {
				best, be = q-p+1, e
			}
		}
		if best > 0 {
			found(be)
			if be.kind == TalkNone && starts[p] >= body {
				// fillers and openers hold function words ("for your help")
				for _, w := range ws[p : p+best] {
					t.Conv = t.Conv || convWords[w]
				}
			}
			p += best
			continue
		}
		if starts[p] >= body && convWords[ws[p]] {
			t.Conv = true
		}
		rest++
		p++
	}
	return rest
}

// scanHan consumes the Han run norm[i:j] by the longest lexicon phrase at
// each character and returns how many characters are left over.
func scanHan(norm string, i, j, body int, t *Talk, found func(talkEntry)) int {
	rest := 0
	// A one-character phrase (早, 好, 对, 拜) counts only when the whole run
	// is small talk: 早餐 and 好评 are not. The openers 嗨, 喂, 嘿, 嗯, 哦 always
	// count.
	var singles [8]talkEntry
	nsingles := 0
	for p := i; p < j; {
		best, be := 0, talkEntry{}
		h := uint64(offset64)
		q, n := p, 0
		for q < j && n < talkMaxRunes {
			_, s := utf8.DecodeRuneInString(norm[q:])
			h = hadd(h, norm[q:q+s])
			q += s
			n++
			if e, ok := talkIndex[h]; ok {
				best, be = q-p, e
			}
		}
		r, s := utf8.DecodeRuneInString(norm[p:])
		if best > 0 {
			switch {
			case best > s || leadSingles[norm[p:p+s]]:
				found(be)
			case nsingles < len(singles):
				singles[nsingles] = be
				nsingles++
			}
			if be.kind == TalkNone && p >= body {
				// a filler such as 你 or 啊 is a conversational word
				for k := p; k < p+best; {
					r2, s2 := utf8.DecodeRuneInString(norm[k:])
					if convChar(r2, k+s2 == len(norm)) {
						t.Conv = true
					}
					k += s2
				}
			}
			p += best
			continue
		}
		if p >= body && convChar(r, p+s == len(norm)) {
			t.Conv = true
		}
		rest++
		p += s
	}
	if rest == 0 {
		for _, e := range singles[:nsingles] {
			found(e)
		}
	}
	return rest
}

func convChar(r rune, last bool) bool { return convHan[r] || r == '么' && last }

// canonWord maps a stretched or laughing word to its lexicon form: "hiii"
// -> "hi", "thanksss" -> "thanks", "goood" -> "good", "hahaha" -> "haha".
// Words already in the lexicon, and words with digits, are returned as
// they are.
func canonWord(w string) string {
	if talkVocab[w] || convWords[w] || !isDigitFree(w) {
		return w
	}
	if isLaugh(w) {
		return "haha"
	}
	if !hasRun3(w) {
		return w
	}
	if s := squeeze(w, 2); talkVocab[s] {
		return s
	}
	if s := squeeze(w, 1); talkVocab[s] {
		return s
	}
	return w
}

func hasRun3(w string) bool {
	for i := 2; i < len(w); i++ {
		if w[i] == w[i-1] && w[i] == w[i-2] {
			return true
		}
	}
	return false
}

// squeeze shortens every run of a repeated byte to at most n.
func squeeze(w string, n int) string {
	b := make([]byte, 0, len(w))
	run := 0
	for i := 0; i < len(w); i++ {
		if i > 0 && w[i] == w[i-1] {
			run++
		} else {
			run = 1
		}
		if run <= n {
			b = append(b, w[i])
		}
	}
	return string(b)
}

// isLaugh reports "haha", "hehehe", "hahah", "lolol", "lmaooo", "hhhh".
func isLaugh(w string) bool {
	if len(w) < 3 {
		return false
	}
	switch {
	case strings.Trim(w, "h") == "":
		return true
	case strings.HasPrefix(w, "lmao") && strings.Trim(w[4:], "o") == "":
		return true
	case strings.HasPrefix(w, "lol") && strings.Trim(w[3:], "ol") == "":
		return true
	}
	pairs := 0
	for i := 0; i+1 < len(w); i += 2 {
		if w[i] != 'h' || !strings.ContainsRune("aeio", rune(w[i+1])) {
			return false
		}
		pairs++
	}
	if len(w)%2 == 1 && w[len(w)-1] != 'h' {
		return false
	}
	return pairs >= 2
}

// contracted are the words that an apostrophe contraction ("I'd", "we'll",
// "let's") starts with; normalization erases the apostrophe ("id", "well").
var contracted = lexSet("contracted")

// raw scans the text as typed for identifier shapes, apostrophe
// contractions and meaningful emoji (which normalization erases); it
// returns the emoji kinds as a bit set and the first one.
func raw(text string, t *Talk) (emoji uint8, first TalkKind) {
	prevAlnum := false
	joiner := false
	word := -1 // start of the current run of ASCII letters
	for i, r := range text {
		if r == '\'' || r == '’' {
			if word >= 0 && contracted[strings.ToLower(text[word:i])] {
				t.Conv = true
			}
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			if word < 0 {
				word = i
			}
		} else {
			word = -1
		}
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		alnum := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		switch {
		case r >= '0' && r <= '9':
			t.Ident = true
		case alnum && joiner:
			t.Ident = true
		}
		joiner = prevAlnum && (r == '_' || r == '.' || r == '@')
		if !joiner {
			prevAlnum = alnum
		}
		if r >= 0x1F000 {
			if k, ok := talkEmoji[r]; ok {
				if first == TalkNone {
					first = k
				}
				emoji |= 1 << k
			}
		}
	}
	return emoji, first
}
