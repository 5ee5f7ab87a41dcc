// Package analysis turns text into the terms that the lexical indexes (the
// embedded BM25 index and the Qdrant sparse vectors) store and query.
//
// An analyzer is composed, in the spirit of bleve's analysis package, from a
// Tokenizer that splits text into runs and a chain of Filters that rewrite
// the run tokens (width folding, lower-casing, CJK bigrams). There is no
// global registry: a Pipeline is a plain value that callers build or take
// from Default.
//
// The Default analyzer handles mixed Latin and CJK text without a
// dictionary: Latin letter and digit runs become lower-cased words, and runs
// of Han, Hiragana, Katakana or Hangul become character unigrams plus
// overlapping bigrams, which is what Lucene's CJK analyzer emits when it
// keeps unigrams.
package analysis

import "strings"

// Analyzer turns a text into its index terms. Implementations are safe for
// concurrent use. An empty text, or a text of separators only, yields no
// terms (nil).
type Analyzer interface {
	Tokens(text string) []string
}

// Kind says which rules produced a token, so that later filters can treat
// scripts differently.
type Kind uint8

// Token kinds.
const (
	// Word is a run of letters, digits and combining marks outside the CJK
	// scripts (Latin, Cyrillic, digits, ...).
	Word Kind = iota
	// CJK is a run of Han, Hiragana, Katakana or Hangul characters, or a
	// unigram or bigram cut from such a run.
	CJK
)

// Token is one term with the byte span of the input it came from.
type Token struct {
	Term       string
	Start, End int // byte offsets into the analyzed text, Start < End
	Kind       Kind
}

// Tokenizer splits a text into tokens. Tokenize appends to dst and returns
// the extended slice, so that callers can reuse a buffer.
type Tokenizer interface {
	Tokenize(dst []Token, text string) []Token
}

// Filter rewrites a token stream. It may modify tokens in place and reuse
// the backing array of its argument; it returns the new stream. Filters
// must not keep a reference to the slice after returning.
type Filter interface {
	Filter(tokens []Token) []Token
}

// Pipeline is an Analyzer made of a Tokenizer followed by Filters applied in
// order. The zero Pipeline uses the Unicode tokenizer and no filters. A
// Pipeline is safe for concurrent use when its parts are, which the parts of
// this package are (they are stateless).
type Pipeline struct {
	Tokenizer Tokenizer // nil means Unicode{}
	Filters   []Filter
}

// Analyze returns the filtered token stream of text, with offsets.
func (p Pipeline) Analyze(text string) []Token {
	var tz Tokenizer = Unicode{}
	if p.Tokenizer != nil {
		tz = p.Tokenizer
	}
	toks := tz.Tokenize(make([]Token, 0, estimateTokens(text)), text)
	for _, f := range p.Filters {
		if len(toks) == 0 {
			break
		}
		toks = f.Filter(toks)
	}
	return toks
}

// Tokens returns the terms of text, in text order (see Analyze).
func (p Pipeline) Tokens(text string) []string {
	toks := p.Analyze(text)
	if len(toks) == 0 {
		return nil
	}
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Term
	}
	return out
}

// estimateTokens guesses the length of the final stream so that the
// tokenizer and the bigram filter, which expands in place, rarely grow the
// buffer: about one word per 4 ASCII bytes at most, and up to two terms (a
// unigram and a bigram) per 3-byte CJK character.
func estimateTokens(text string) int {
	multi := 0
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			multi++
		}
	}
	return (len(text)-multi)/4 + multi*2/3 + 4
}

// Default returns the project's analyzer: the Unicode tokenizer, then
// full-width folding, lower-casing and CJK unigrams plus bigrams.
//
//	"Wi-Fi密码是5000" -> wi fi 密 密码 码 码是 是 5000
//
// Terms that need no rewriting are substrings of the input, so an index
// that keeps a term must copy it (strings.Clone) rather than pin the text.
// Each call returns a new Pipeline, so a caller that edits its filters
// cannot change anyone else's analyzer.
func Default() Analyzer { return newDefault() }

func newDefault() Pipeline {
	return Pipeline{
		Tokenizer: Unicode{},
		Filters:   []Filter{Width{}, Lower{}, CJKBigram{}},
	}
}

// Func adapts a plain function to the Analyzer interface.
type Func func(text string) []string

// Tokens calls f(text).
func (f Func) Tokens(text string) []string { return f(text) }

// Whitespace returns an analyzer that splits on Unicode white space and
// keeps everything else as is; it suits pre-tokenized text such as the
// synthetic benchmark workload.
func Whitespace() Analyzer {
	return Func(func(text string) []string {
		f := strings.Fields(text)
		if len(f) == 0 {
			return nil
		}
		return f
	})
}
