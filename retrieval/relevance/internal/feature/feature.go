// Package feature computes the lexical features from which package
// relevance estimates P(relevant): how much of a query a passage contains,
// how much of it verbatim, and how informative the query is. It is shared
// by the calibrator and by the program that fits its coefficients, so that
// both compute exactly the same numbers.
//
// Text is cut into tokens with the project analyzer's character classes
// (analysis.Unicode, re-implemented here as a one-pass scanner for speed;
// FuzzExtract checks it against the analyzer): a run of letters and digits
// is one word token, width-folded and lower-cased; a run of CJK characters
// gives one token per character. Two things make a word match more than
// its exact spelling, identically in query and passage: a number written
// with thousands separators is one token (5,000, 1,000,000 and ５，０００
// are 5000, 1000000 and 5000), and a word is known by its stem under a
// light English stemmer (see stemCut: claims, claim; approves, approved,
// approve). Query tokens are grouped into units, the things coverage
// counts: a distinct word, or one CJK character. A CJK character counts as
// found when a passage contains one of the query's character bigrams that
// hold it (a single-character run needs the character itself), so a
// dictionary-free bigram match stands in for Chinese words without
// penalising the bigrams that straddle two words.
//
// A unit's weight stands in for its inverse document frequency, which is
// unknown at query time: WeightStop for function words, question words
// and Chinese particles (short fixed lists, words with the stem of a stop
// word, Chinese question words such as 多少 and 什么 counted as bigrams),
// WeightContent for the rest.
// Weights depend on the text alone, never on the other candidates, so a
// passage gets the same features whichever retrieval method (and
// candidate set) brought it.
package feature

import (
	"math"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Indices of the features in a Vector.
const (
	// Cov is the weighted share of the query's units found in the passage.
	Cov = iota
	// Run is the weighted share of the query's tokens in the longest run
	// of consecutive query tokens that the passage holds in the same
	// order, contiguous.
	Run
	// Miss is log(1 + the weight of the units not found).
	Miss
	// QLen is log(1 + the weight of all the query's units): how much the
	// query says.
	QLen
	// PLen is log(1 + the number of tokens searched in the passage): a
	// long passage contains more words by chance.
	PLen
	// CJK is the share of the query's unit weight held by CJK characters
	// (0 for an English query, 1 for a Chinese one).
	CJK
	// Rev (FAQ entries only) is the weighted share of the FAQ question's
	// units found in the query: the reverse of Cov, so that a short query
	// does not fully match a long, more specific question.
	Rev
	// Both (FAQ entries only) is min(Cov, Rev): the query and the
	// question must each hold the other.
	Both
	// N is the number of features.
	N
)

// Names are the features' names, in Vector order.
var Names = [N]string{"cov", "run", "miss", "qlen", "plen", "cjk", "rev", "both"}

// Vector holds one passage's features.
type Vector [N]float64

// Unit weights (see the package comment).
const (
	WeightContent = 1.0
	WeightStop    = 0.1
)

// Key spaces: the top two bits tell a word hash, a CJK rune and a CJK bigram
// apart, so that no key of one kind equals a key of another.
const (
	spaceRune   uint64 = 1 << 62
	spaceBigram uint64 = 2 << 62
	spaceWord   uint64 = 3 << 62
	spaceMask   uint64 = 3 << 62
)

func runeKey(r rune) uint64      { return spaceRune | uint64(r) }
func bigramKey(a, b rune) uint64 { return spaceBigram | uint64(a)<<21 | uint64(b) }

// The parameters of FNV-1a, with which word keys are hashed.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// wordKey hashes (FNV-1a) the stem (see stemCut) of the folded form of a
// word token: full-width ASCII to ASCII, lower case, without the thousands
// separators of a number token ("5,000" is 5000). The scanner's inline
// path for ASCII words computes the same key.
func wordKey(s string) uint64 {
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != ',' {
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == 0xFF0C { // '，', a full-width thousands separator
			continue
		}
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	k, extra := stemCut(string(b)) // no copy: the string does not escape
	h := uint64(fnvOffset)
	for _, c := range b[:k] {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return stemKey(h, extra)
}

// fnvLower hashes the ASCII s lower-cased.
func fnvLower(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// stemKey finishes the key of a stem whose first bytes hash to h (FNV-1a)
// and which ends in extra when extra is not 0.
func stemKey(h uint64, extra byte) uint64 {
	if extra != 0 {
		h ^= uint64(extra)
		h *= fnvPrime
	}
	return h&^spaceMask | spaceWord
}

// stemCut is a light English stemmer, for the inflections that keep a
// passage from holding a query's words verbatim. The stem of the word w
// (folded, or ASCII, which it reads lower-cased) is w[:k] followed by
// extra when extra is not 0: a prefix at most 5 bytes shorter than the
// word, plus at most one letter, so that the scanner can hash it without
// building it. Only ASCII letters are looked at. With n the length of w
// and k that of the stem so far:
//
//   - plurals (n >= 4): -ies becomes -y when n >= 5 (policies, but dies ->
//     die); -sses, -xes, -ches and -shes lose -es (classes, taxes,
//     branches); -ss stays, and so do -us and -is when n >= 5 (status,
//     basis, but GPUs, APIs); any other final s goes (claims, expenses,
//     days);
//   - then -ied becomes -y (applied -> apply); -ed (k >= 5, not -eed:
//     exceed) and -ing (k >= 6) go when what is left holds a vowel (not
//     string). After them a doubled final consonant other than l, s, z
//     and f is undoubled when k >= 4 (submitted -> submit, but added ->
//     add), and a three-letter consonant-vowel-consonant stem not ending
//     in w, x or y gets its e back (noted -> note, taking -> take);
//   - otherwise a final e goes (k >= 5, not -ee), so that approve,
//     approves, approved and approving share the stem approv, while note
//     and employee stay.
func stemCut(w string) (k int, extra byte) {
	if n := len(w); n < 4 || !stemmable[w[n-1]] {
		return n, 0
	}
	return stemSuffix(w)
}

// stemmable tells the last letters of the words that stemSuffix may cut.
var stemmable = [256]bool{'s': true, 'S': true, 'd': true, 'D': true, 'g': true, 'G': true, 'e': true, 'E': true}

func stemSuffix(w string) (k int, extra byte) {
	n := len(w)
	// at is w[i] lower-cased if a letter; another byte may change, but
	// never into a letter.
	at := func(i int) byte { return w[i] | 0x20 }
	k = n
	if at(n-1) == 's' {
		switch p := at(n - 2); {
		case p == 's', (p == 'u' || p == 'i') && n >= 5:
		case p == 'e' && at(n-3) == 'i' && n >= 5:
			return n - 3, 'y'
		case p == 'e' && (at(n-3) == 'x' || at(n-3) == 's' && at(n-4) == 's' || at(n-3) == 'h' && (at(n-4) == 'c' || at(n-4) == 's')):
			k = n - 2
		default:
			k = n - 1
		}
	}
	vowelIn := func(m int) bool {
		for i := range m {
			if isVowel(at(i)) {
				return true
			}
		}
		return false
	}
	switch {
	case k >= 5 && at(k-1) == 'd' && at(k-2) == 'e' && at(k-3) == 'i':
		return k - 3, 'y'
	case k >= 5 && at(k-1) == 'd' && at(k-2) == 'e' && at(k-3) != 'e' && vowelIn(k-2):
		k -= 2
	case k >= 6 && at(k-1) == 'g' && at(k-2) == 'n' && at(k-3) == 'i' && vowelIn(k-3):
		k -= 3
	default:
		if k >= 5 && at(k-1) == 'e' && at(k-2) != 'e' {
			k--
		}
		return k, 0
	}
	switch c := at(k - 1); {
	case k >= 4 && c == at(k-2) && !isVowel(c) && c != 'l' && c != 's' && c != 'z' && c != 'f':
		return k - 1, 0
	case k == 3 && !isVowel(at(0)) && isVowel(at(1)) && !isVowel(c) && c != 'w' && c != 'x' && c != 'y':
		return k, 'e'
	}
	return k, 0
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

// qtok is one query token.
type qtok struct {
	key    uint64
	w      float64
	unit   int32
	r      rune // the character of a CJK token
	cjk    bool
	joined bool // a CJK character right after another
	single bool // a CJK run of one character
}

// MaxQueryTokens bounds the query tokens that count: a longer query is
// cut, so that the cost per passage stays bounded whatever is pasted in.
const MaxQueryTokens = 256

// Query is a query prepared for feature extraction. It is immutable once
// built and safe for concurrent use.
type Query struct {
	toks   []qtok
	tokPos table // token key -> positions in toks
	bigPos table // CJK bigram key -> position of its first character
	unitW  []float64
	totalW float64    // sum of unit weights
	tokW   float64    // sum of token weights
	cjkW   float64    // unit weight held by CJK characters
	runes  [64]uint64 // a filter of the query's CJK characters (no false negatives)
	words  [64]uint64 // a filter of the query's word keys
}

// Units returns the number of units of q; a query without any (empty, or
// punctuation only) has no features.
func (q *Query) Units() int { return len(q.unitW) }

// Prepare analyses query (its first MaxQueryTokens tokens).
func Prepare(query string) *Query {
	q := &Query{toks: make([]qtok, 0, 16)}
	lastEnd := -1 // end of the last CJK token
	for i := 0; len(q.toks) < MaxQueryTokens; {
		start, end, r, kind := next(query, i)
		if kind == sep {
			break
		}
		i = end
		if kind == word {
			k := wordKey(query[start:end])
			q.toks = append(q.toks, qtok{key: k, w: wordWeight(k)})
			q.words[(k>>6)&63] |= 1 << (k & 63)
			continue
		}
		q.toks = append(q.toks, qtok{key: runeKey(r), w: runeWeight(r), r: r, cjk: true, joined: start == lastEnd})
		q.runes[(r>>6)&63] |= 1 << (uint(r) & 63)
		lastEnd = end
	}
	for p := 1; p < len(q.toks); p++ {
		if a, b := &q.toks[p-1], &q.toks[p]; b.joined && questionBigram(a.r, b.r) {
			a.w, b.w = WeightStop, WeightStop
		}
	}
	es := make([]entry, 0, 2*len(q.toks))
	for p, t := range q.toks {
		es = append(es, entry{t.key, int32(p)})
	}
	q.tokPos = newTable(es)
	es = es[:0]
	for p := 0; p+1 < len(q.toks); p++ {
		if a, b := q.toks[p], q.toks[p+1]; a.cjk && b.cjk && b.joined {
			es = append(es, entry{bigramKey(a.r, b.r), int32(p)})
		}
	}
	q.bigPos = newTable(es)
	q.unitW = make([]float64, 0, len(q.toks))
	for p := range q.toks {
		t := &q.toks[p]
		q.tokW += t.w
		if t.cjk {
			// A character alone in its run is found by itself, not by a bigram.
			t.single = !t.joined && (p+1 == len(q.toks) || !q.toks[p+1].cjk || !q.toks[p+1].joined)
		} else if ps, _ := q.tokPos.get(t.key); int(ps[0]) < p {
			t.unit = q.toks[ps[0]].unit // a word seen before
			continue
		}
		t.unit = int32(len(q.unitW))
		q.unitW = append(q.unitW, t.w)
		q.totalW += t.w
		if t.cjk {
			q.cjkW += t.w
		}
	}
	return q
}

// Scratch is per-goroutine working memory for Extract. The zero value is
// ready; reusing one across calls avoids allocations.
type Scratch struct {
	found    []bool
	lastIdx  []int64   // passage token index at which a query position last matched
	lastRun  []float64 // weight of the run ending there
	k        int64     // passage token counter, never reset (runs cannot span calls)
	best     float64
	ntok     int
	revW     float64 // FAQ question unit weight
	revFound float64 // ... of which found in the query

	// The CJK run being read.
	prev      rune
	prevIn    bool    // prev is a query character
	prevFound bool    // (FAQ) prev is covered by a query bigram
	prevW     float64 // (FAQ) weight of prev
	runLen    int     // characters so far in the run
}

func (s *Scratch) reset(q *Query) {
	n := len(q.toks)
	if cap(s.found) < len(q.unitW) {
		s.found = make([]bool, len(q.unitW))
	}
	s.found = s.found[:len(q.unitW)]
	clear(s.found)
	if cap(s.lastIdx) < n {
		s.lastIdx = make([]int64, n)
		s.lastRun = make([]float64, n)
		for i := range s.lastIdx {
			s.lastIdx[i] = -2
		}
	}
	s.lastIdx, s.lastRun = s.lastIdx[:n], s.lastRun[:n]
	s.k += 2 // a gap: no run continues from an earlier call
	s.best, s.ntok, s.revW, s.revFound = 0, 0, 0, 0
}

// Extract returns the features of a passage whose searchable fields are
// fields (a title and a text, say). Runs do not cross fields. faq says the
// single field is an FAQ question, which also sets Rev. A query without
// units gives the zero Vector.
func (q *Query) Extract(s *Scratch, faq bool, fields ...string) Vector {
	var v Vector
	if len(q.unitW) == 0 {
		return v
	}
	s.reset(q)
	for _, f := range fields {
		q.scan(s, f, faq)
		s.k += 2
	}
	var found float64
	for u, ok := range s.found {
		if ok {
			found += q.unitW[u]
		}
	}
	v[Cov] = found / q.totalW
	v[Run] = s.best / q.tokW
	v[Miss] = math.Log1p(q.totalW - found)
	v[QLen] = math.Log1p(q.totalW)
	v[PLen] = math.Log1p(float64(s.ntok))
	v[CJK] = q.cjkW / q.totalW
	if faq && s.revW > 0 {
		v[Rev] = s.revFound / s.revW
		v[Both] = min(v[Cov], v[Rev])
	}
	return v
}

// match records that passage token number s.k equals the query tokens at
// positions ps, extending the runs that ended at the previous token.
func (q *Query) match(s *Scratch, ps []int32) {
	for i := len(ps) - 1; i >= 0; i-- { // descending: p-1 is read before it is written
		p := ps[i]
		run := q.toks[p].w
		if p > 0 && s.lastIdx[p-1] == s.k-1 {
			run += s.lastRun[p-1]
		}
		s.lastIdx[p], s.lastRun[p] = s.k, run
		if run > s.best {
			s.best = run
		}
		if t := q.toks[p]; !t.cjk || t.single {
			s.found[t.unit] = true
		}
	}
}

// scan reads one field of a passage. It walks the text once, byte by
// byte, with the common cases (ASCII words, CJK ideographs) inline: it is
// the calibrator's inner loop.
func (q *Query) scan(s *Scratch, text string, faq bool) {
	s.runLen = 0
	n := len(text)
	for i := 0; i < n; {
		b := text[i]
		if b < utf8.RuneSelf {
			if asciiClass[b] != word {
				i++
				s.endRun(faq)
				continue
			}
			// An ASCII word, hashed as it is read, with the hash of each
			// of its prefixes kept in a ring of 8 so that the stem (a
			// prefix at most 5 bytes shorter) need not be hashed again; a
			// non-ASCII word rune inside it, or a thousands separator after
			// it, sends the whole word to the general path.
			h := uint64(fnvOffset)
			j := i
			for j < n && text[j] < utf8.RuneSelf && asciiClass[text[j]] == word {
				c := text[j]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				h ^= uint64(c)
				h *= fnvPrime
				j++
			}
			if j < n && j-i <= 3 && text[j] == ',' {
				if _, end, _, _ := next(text, i); end != j { // a number such as 5,000
					q.word(s, wordKey(text[i:end]), faq)
					i = end
					continue
				}
			} else if j < n && text[j] >= utf8.RuneSelf {
				if r, _ := decode(text, j); runeClass(r) == word || r == 0xFF0C && j-i <= 3 {
					if _, end, _, _ := next(text, i); end != j {
						q.word(s, wordKey(text[i:end]), faq)
						i = end
						continue
					}
				}
			}
			k, extra := stemCut(text[i:j])
			if k < j-i {
				h = fnvLower(text[i : i+k])
			}
			q.word(s, stemKey(h, extra), faq)
			i = j
			continue
		}
		// The common case of Chinese text: a three-byte ideograph of the
		// main block that is not a query character.
		if b&0xF0 == 0xE0 && i+2 < n {
			c1, c2 := text[i+1], text[i+2]
			if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
				r := rune(b&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
				if r >= 0x4E00 && r <= 0x9FFF {
					if faq || q.runes[(r>>6)&63]&(1<<(uint(r)&63)) != 0 {
						q.char(s, r, faq)
					} else {
						s.prevIn = false
						s.runLen++
						s.ntok++
						s.k++
					}
					i += 3
					continue
				}
			}
		}
		r, size := decode(text, i)
		switch runeClass(r) {
		case cjk:
			q.char(s, r, faq)
			i += size
		case word:
			start, end, _, _ := next(text, i)
			q.word(s, wordKey(text[start:end]), faq)
			i = end
		default:
			s.endRun(faq)
			i += size
		}
	}
	s.endRun(faq)
}

// word handles a word token of the passage with key k.
func (q *Query) word(s *Scratch, k uint64, faq bool) {
	s.endRun(faq)
	s.ntok++
	var ps []int32
	ok := q.words[(k>>6)&63]&(1<<(k&63)) != 0
	if ok {
		ps, ok = q.tokPos.get(k)
	}
	if ok {
		q.match(s, ps)
	}
	if faq {
		w := wordWeight(k)
		s.revW += w
		if ok {
			s.revFound += w
		}
	}
	s.k++
}

// char handles a CJK character of the passage, the next of the current
// run (s.runLen characters so far).
func (q *Query) char(s *Scratch, r rune, faq bool) {
	s.ntok++
	in := q.runes[(r>>6)&63]&(1<<(uint(r)&63)) != 0
	var ps []int32
	if in {
		ps, in = q.tokPos.get(runeKey(r))
	}
	if in {
		q.match(s, ps)
	}
	hit := false
	if in && s.prevIn && s.runLen > 0 {
		if bp, ok := q.bigPos.get(bigramKey(s.prev, r)); ok {
			hit = true
			for _, p := range bp {
				s.found[q.toks[p].unit] = true
				s.found[q.toks[p+1].unit] = true
			}
		}
	}
	if faq {
		w := runeWeight(r)
		if s.runLen > 0 && questionBigram(s.prev, r) {
			s.revW -= s.prevW - WeightStop
			s.prevW, w = WeightStop, WeightStop
		}
		s.revW += w
		if s.runLen > 0 && (s.prevFound || hit) {
			s.revFound += s.prevW
		}
		s.prevFound, s.prevW = hit, w
	}
	s.prev, s.prevIn = r, in
	s.runLen++
	s.k++
}

// endRun closes the current CJK run, if any. For Rev it settles the run's
// last character: covered by the bigram before it, or, alone, by the
// query holding it.
func (s *Scratch) endRun(faq bool) {
	if s.runLen == 0 {
		return
	}
	if faq && (s.prevFound || s.runLen == 1 && s.prevIn) {
		s.revFound += s.prevW
	}
	s.runLen = 0
}

// wordWeight is the weight of a word unit with key k (see wordKey):
// WeightStop when k is the key of a stop word, so that the inflections of
// a stop word (needs, uses, others) are stop words too.
func wordWeight(k uint64) float64 {
	if stopKeys[k] {
		return WeightStop
	}
	return WeightContent
}

var stopKeys = func() map[uint64]bool {
	m := map[uint64]bool{}
	for w := range stopWords {
		m[wordKey(w)] = true
	}
	return m
}()

// questionBigram reports whether a and b, adjacent, spell a Chinese
// question word or modal ("多少", "什么", "是否", ...): both characters then
// weigh WeightStop, as "how", "many" and "what" do in English.
func questionBigram(a, b rune) bool {
	for i := 0; i+1 < len(questionBigrams); i += 2 {
		if questionBigrams[i] == a && questionBigrams[i+1] == b {
			return true
		}
	}
	return false
}

var questionBigrams = []rune("多少什么怎么怎样如何哪些哪个哪里哪儿是否能否可否可以为何多久多长几个请问")

// runeWeight is the weight of a CJK character unit.
func runeWeight(r rune) float64 {
	if slices.Contains(stopRunes, r) {
		return WeightStop
	}
	return WeightContent
}

// stopWords are English function words, question words, pronouns and the
// verbs that questions are phrased with: words that tell little about what
// a question is about.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
		"from", "as", "into", "about", "after", "before", "between", "during", "within", "over", "under",
		"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done",
		"has", "have", "had", "it", "its", "this", "that", "these", "those", "there", "then", "than",
		"so", "if", "not", "no", "s", "t", "d", "ll", "re", "ve", "m", "can", "could", "would",
		"should", "will", "shall", "may", "might", "must", "just", "very", "please", "also",
		"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "much", "many",
		"i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her",
		"they", "them", "their", "one", "any", "some", "all", "each", "other", "more", "most",
		"get", "got", "make", "made", "take", "give", "know", "tell", "need", "want", "use", "used",
	} {
		m[w] = true
	}
	return m
}()

// stopRunes are Chinese particles, pronouns, question characters and the
// most frequent function characters.
var stopRunes = []rune("的了吗呢吧啊呀么嘛哦着得地之也就都还是我你您他她它们这那哪什怎几谁有在和与或及把被给对会能要该个吗请一")
