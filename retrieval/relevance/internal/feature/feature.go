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
// hold it, so a dictionary-free bigram match stands in for Chinese words
// without penalising the bigrams that straddle two words; a character
// with no content character beside it in the query (alone in its run, or
// between stop and question characters: 退 in 可以退) is a word of one
// character and needs only itself. A character the passage holds outside
// the query's bigrams feeds Chr instead.
//
// A unit's weight stands in for its inverse document frequency, which is
// unknown at query time: WeightStop for function words, question words
// and Chinese particles (the lists of lexicon.tsv, a data file; words with
// the stem of a stop word; Chinese question words such as 多少 and 什么
// counted as bigrams), WeightContent for the rest.
// Weights depend on the text alone, never on the other candidates, so a
// passage gets the same features whichever retrieval method (and
// candidate set) brought it.
package feature

import (
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
	// Chr is the weighted share of the query's units that are CJK
	// characters the passage holds only by themselves, not in one of the
	// query's bigrams: a one-character morpheme (退 in 可以退 against 退还
	// and 不退) that Cov does not count. A character that the query found
	// at another position does not count (the 公 of 办公室 against a
	// passage whose only 公 is that of the query's 公司).
	Chr
	// Head (documents only) is the weighted share of the query's units
	// that the passage's heading path (its first field) holds, a CJK
	// character counting by itself: a section titled with the query's
	// words is about them.
	Head
	// Sent (documents only) is the largest share of the query, counted as
	// Cov counts it, that one sentence of the passage holds: words that
	// stand together in one sentence answer a question more often than
	// the same words spread over a long passage. A sentence ends at 。！？；
	// and their ASCII forms (a full stop only before a space or the end),
	// at a line break and at the end of a field (the heading path is one).
	Sent
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
var Names = [N]string{"cov", "run", "miss", "qlen", "plen", "cjk", "chr", "head", "sent", "rev", "both"}

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
