package feature

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"
)

// lexiconTSV is the general-language lexicon (see its header): the stop
// words and characters and the Chinese question words, as data.
//
//go:embed lexicon.tsv
var lexiconTSV string

// lexicon is lexiconTSV parsed. It is built once, when the package is
// initialised, and only read afterwards.
type lexicon struct {
	stopWords map[string]bool      // English stop words, as written
	stopKeys  map[uint64]bool      // the word keys (stems) of stopWords
	stopRunes [0x10000 / 64]uint64 // a bit set of the Chinese stop characters (all in the BMP)
	question  map[uint64]bool      // bigramKey of each Chinese question word
}

var lex = mustLexicon(lexiconTSV)

func mustLexicon(src string) *lexicon {
	l, err := parseLexicon(src)
	if err != nil {
		panic(err) // the embedded file is part of the source
	}
	return l
}

// parseLexicon reads the lexicon's lines: language, class and entry,
// tab-separated; blank lines and lines starting with # are skipped.
func parseLexicon(src string) (*lexicon, error) {
	l := &lexicon{stopWords: map[string]bool{}, stopKeys: map[uint64]bool{}, question: map[uint64]bool{}}
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] == "" {
			return nil, fmt.Errorf("feature: lexicon line %d: want language, class and entry: %q", n+1, line)
		}
		lang, class, e := f[0], f[1], f[2]
		switch {
		case lang == "en" && class == "stop":
			l.stopWords[e] = true
			l.stopKeys[wordKey(e)] = true
		case lang == "zh" && class == "stop" && utf8.RuneCountInString(e) == 1:
			r, _ := utf8.DecodeRuneInString(e)
			if r >= 0x10000 || runeClass(r) != cjk {
				return nil, fmt.Errorf("feature: lexicon line %d: %q is not a CJK character of the BMP", n+1, e)
			}
			l.stopRunes[r>>6] |= 1 << (uint(r) & 63)
		case lang == "zh" && class == "question" && utf8.RuneCountInString(e) == 2:
			a, size := utf8.DecodeRuneInString(e)
			b, _ := utf8.DecodeRuneInString(e[size:])
			l.question[bigramKey(a, b)] = true
		default:
			return nil, fmt.Errorf("feature: lexicon line %d: unknown entry %q (language %s, class %s)", n+1, e, lang, class)
		}
	}
	return l, nil
}

// wordWeight is the weight of a word unit with key k (see wordKey):
// WeightStop when k is the key of a stop word, so that the inflections of
// a stop word (needs, uses, others) are stop words too.
func wordWeight(k uint64) float64 {
	if lex.stopKeys[k] {
		return WeightStop
	}
	return WeightContent
}

// runeWeight is the weight of a CJK character unit.
func runeWeight(r rune) float64 {
	if r < 0x10000 && lex.stopRunes[r>>6]&(1<<(uint(r)&63)) != 0 {
		return WeightStop
	}
	return WeightContent
}

// questionBigram reports whether a and b, adjacent, spell a Chinese
// question word or modal ("多少", "什么", "是否", ...): both characters then
// weigh WeightStop, as "how", "many" and "what" do in English.
func questionBigram(a, b rune) bool { return lex.question[bigramKey(a, b)] }
