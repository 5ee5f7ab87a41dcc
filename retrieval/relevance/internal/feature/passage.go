package feature

import (
	"math"
	"unicode/utf8"
)

// A passage is read once into a stream of token keys (Scratch.Load) and
// then matched against each query (Query.Match): a question that compares
// subjects is matched whole and side by side, and reading the text
// (decoding, classifying, folding, stemming and hashing) costs several
// times more than matching the keys.

// joinedBit marks, in the key of a CJK character of the stream, that the
// character follows another in the same run (no separator between), so
// that the two form a bigram. Rune keys use the low 21 bits only.
const (
	joinedBit uint64 = 1 << 40
	runeMask  uint64 = 1<<21 - 1
)

// Scratch is per-goroutine working memory for Load, Match and Extract: the
// passage last loaded, and the state of a match. The zero value is ready;
// reusing one across calls avoids allocations.
type Scratch struct {
	// The passage (Load).
	toks   []uint64 // token keys, a CJK character joined to the one before carrying joinedBit
	fields []int32  // end of each field in toks
	sents  []int32  // where in toks a sentence starts after a sentence end within a field
	faq    bool
	plen   float64 // the PLen feature

	// The match (Match).
	found    []bool    // by unit: found (a word, a CJK character by a bigram or alone in its run)
	seen     []bool    // by unit: the passage holds the word or the character
	lastIdx  []int64   // passage token index at which a query position last matched
	lastRun  []float64 // weight of the run ending there
	k        int64     // passage token counter, never reset (runs cannot span calls)
	best     float64
	revW     float64 // FAQ question unit weight
	revFound float64 // ... of which found in the query

	// The sentence being read (Sent).
	sentOf   []int64 // by unit: the sentence in which it was last found
	sentID   int64   // the current sentence, never reset (as k)
	sentW    float64 // weight of the units found in the current sentence
	bestSent float64

	// The CJK run being read.
	prev      rune
	prevIn    bool    // prev is a query character
	prevFound bool    // (FAQ) prev is covered by a query bigram
	prevW     float64 // (FAQ) weight of prev
	runLen    int     // characters so far in the run
}

// Load reads a passage whose searchable fields are fields (see
// Query.Extract) into s, replacing the one loaded before.
func (s *Scratch) Load(faq bool, fields ...string) {
	s.toks, s.fields, s.sents, s.faq = s.toks[:0], s.fields[:0], s.sents[:0], faq
	for _, f := range fields {
		s.tokenize(f)
		s.fields = append(s.fields, int32(len(s.toks)))
	}
	s.plen = math.Log1p(float64(len(s.toks)))
}

func (s *Scratch) reset(q *Query) {
	n, u := len(q.toks), len(q.unitW)
	if cap(s.found) < u {
		s.found, s.seen = make([]bool, u), make([]bool, u)
	}
	s.found, s.seen = s.found[:u], s.seen[:u]
	clear(s.found)
	clear(s.seen)
	if cap(s.sentOf) < u {
		s.sentOf = make([]int64, u)
	}
	s.sentOf = s.sentOf[:u] // stale entries name earlier sentences
	s.sentID++
	s.sentW, s.bestSent = 0, 0
	if cap(s.lastIdx) < n {
		s.lastIdx = make([]int64, n)
		s.lastRun = make([]float64, n)
		for i := range s.lastIdx {
			s.lastIdx[i] = -2
		}
	}
	s.lastIdx, s.lastRun = s.lastIdx[:n], s.lastRun[:n]
	s.k += 2 // a gap: no run continues from an earlier call
	s.best, s.revW, s.revFound, s.runLen = 0, 0, 0, 0
}

// find records that unit u, of weight w, is found at the current token.
func (s *Scratch) find(u int32, w float64) {
	s.found[u] = true
	if s.sentOf[u] != s.sentID {
		s.sentOf[u] = s.sentID
		s.sentW += w
	}
}

// endSentence closes the current sentence.
func (s *Scratch) endSentence() {
	s.bestSent = max(s.bestSent, s.sentW)
	s.sentW = 0
	s.sentID++
}

// sentenceEnd records that a sentence ended at the end of s.toks, unless
// nothing was read since the last end.
func (s *Scratch) sentenceEnd(fieldStart int) {
	n := int32(len(s.toks))
	if int(n) > fieldStart && (len(s.sents) == 0 || s.sents[len(s.sents)-1] != n) {
		s.sents = append(s.sents, n)
	}
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

// tokenize appends the token keys of text to s.toks. It walks the text
// once, byte by byte, with the common cases (ASCII words, CJK ideographs)
// inline: it is the calibrator's inner loop.
func (s *Scratch) tokenize(text string) {
	var joined uint64 // joinedBit when the last token was a CJK character and no separator followed
	n := len(text)
	fieldStart := len(s.toks)
	for i := 0; i < n; {
		b := text[i]
		if b < utf8.RuneSelf {
			if asciiClass[b] != word {
				if asciiEnd[b] || b == '.' && (i+1 == n || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t' || text[i+1] == '\r') {
					s.sentenceEnd(fieldStart)
				}
				i++
				joined = 0
				continue
			}
			joined = 0
			// An ASCII word, hashed as it is read, so that a word without
			// a suffix to cut need not be read again; a non-ASCII word
			// rune inside it, or a thousands separator after it, sends the
			// whole word to the general path.
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
					s.toks = append(s.toks, wordKey(text[i:end]))
					i = end
					continue
				}
			} else if j < n && text[j] >= utf8.RuneSelf {
				if r, _ := decode(text, j); runeClass(r) == word || r == 0xFF0C && j-i <= 3 {
					if _, end, _, _ := next(text, i); end != j {
						s.toks = append(s.toks, wordKey(text[i:end]))
						i = end
						continue
					}
				}
			}
			k, extra := stemCut(text[i:j])
			if k < j-i {
				h = fnvLower(text[i : i+k])
			}
			s.toks = append(s.toks, stemKey(h, extra))
			i = j
			continue
		}
		// The common case of Chinese text: a three-byte ideograph of the
		// main block.
		if b&0xF0 == 0xE0 && i+2 < n {
			c1, c2 := text[i+1], text[i+2]
			if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
				r := rune(b&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
				if r >= 0x4E00 && r <= 0x9FFF {
					s.toks = append(s.toks, runeKey(r)|joined)
					joined = joinedBit
					i += 3
					continue
				}
			}
		}
		r, size := decode(text, i)
		if r == '。' || r == '！' || r == '？' || r == '；' {
			s.sentenceEnd(fieldStart)
		}
		switch runeClass(r) {
		case cjk:
			s.toks = append(s.toks, runeKey(r)|joined)
			joined = joinedBit
			i += size
		case word:
			start, end, _, _ := next(text, i)
			s.toks = append(s.toks, wordKey(text[start:end]))
			joined = 0
			i = end
		default:
			joined = 0
			i += size
		}
	}
}

// asciiEnd tells the ASCII bytes that always end a sentence; '.' ends one
// only before white space or the end of the text, so that 5.5 does not.
var asciiEnd = [utf8.RuneSelf]bool{'!': true, '?': true, ';': true, '\n': true}
