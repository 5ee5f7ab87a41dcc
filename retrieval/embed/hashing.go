package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// DefaultDim is the dimension of the offline embedder when HashingConfig.Dim
// is zero. It matches the common small sentence-embedding models (MiniLM,
// bge-small), so a collection created offline keeps its shape when a model
// is plugged in later.
const DefaultDim = 384

// Feature weights of the hashing embedder. They were chosen on the first half
// of each evaluation set's queries (see TestMeasureHashing) and are part of the
// vector space: changing any of them changes every vector, so a store filled
// with the old values must be re-embedded.
const (
	wordWeight      = 1.0  // a whole Latin word
	stopWeight      = 0.25 // a Latin function word or a CJK particle
	gramWeight      = 1.5  // one character n-gram of a Latin word, before sharing
	cjkUniWeight    = 1.0  // one CJK character
	cjkBigramWeight = 1.0  // two adjacent CJK characters
	minGram         = 3
	maxGram         = 5
)

// Feature namespaces keep a word from colliding with an n-gram spelled alike.
const (
	nsWord byte = iota + 1
	nsGram
	nsCJK
	nsEmpty
)

// HashingConfig configures the offline embedder. The zero value is ready to
// use and means Dim = DefaultDim.
type HashingConfig struct {
	// Dim is the vector length; zero means DefaultDim. Small dimensions
	// raise collisions: below ~128 quality drops visibly.
	Dim int
}

// Hashing is an offline embedder that needs no weights and no network. It
// hashes lexical features of a text into a fixed number of signed buckets
// (the "hashing trick"): lower-cased Latin words and their character 3- to
// 5-grams (so that "refund" and "refunds" share most features), CJK
// characters and CJK bigrams. Each feature's weight is 1+ln(tf) times a
// per-kind weight; function words and particles are down-weighted because,
// without a fitted idf, nothing else tells them apart from content words.
// Vectors are L2-normalized, so a dot product is the cosine.
//
// It captures spelling overlap, not meaning: on paraphrase sets it ranks
// below BM25 (see the package's measurement test). Its job is to let the dense
// leg of hybrid search run offline and deterministically.
//
// A Hashing is immutable and safe for concurrent use; equal texts always get
// bit-identical vectors, across processes and platforms.
type Hashing struct {
	dim int
	// scratch holds *features between calls: a feature table of a few
	// hundred entries was most of an embedding's allocation.
	scratch sync.Pool
}

// NewHashing returns the offline embedder configured by cfg.
func NewHashing(cfg HashingConfig) *Hashing {
	d := cfg.Dim
	if d <= 0 {
		d = DefaultDim
	}
	return &Hashing{dim: d}
}

// Dim returns the vector length.
func (h *Hashing) Dim() int { return h.dim }

// Embed returns one unit vector per text. A text without any feature (empty,
// only punctuation) gets a fixed unit vector rather than zeros, so a cosine
// store never divides by zero. No texts give nil, nil. Embed stops early with
// the context's error (wrapped) when ctx is done.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, len(texts))
	// One backing array: fewer allocations and better locality for callers
	// that scan all vectors.
	buf := make([]float32, len(texts)*h.dim)
	f, _ := h.scratch.Get().(*features)
	if f == nil {
		f = new(features)
	}
	defer h.scratch.Put(f)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: hashing: %w", err)
			}
		}
		v := buf[i*h.dim : (i+1)*h.dim : (i+1)*h.dim]
		f.reset()
		extract(t, f)
		f.project(v)
		out[i] = v
	}
	return out, nil
}

// features accumulates weighted feature hashes of one text. Counting first
// and weighting afterwards is what makes tf sublinear.
type features struct {
	m   map[uint64]feature // keyed by feature hash
	acc []float64          // project's buckets
}

type feature struct {
	count  float64 // occurrences
	weight float64 // per-kind weight
}

func (f *features) reset() {
	// A paragraph has a few hundred features. A table grown by a long text
	// is not kept: clearing it would cost every short text after it.
	if f.m == nil || len(f.m) > 4096 {
		f.m = make(map[uint64]feature, 256)
		return
	}
	clear(f.m)
}

func (f *features) add(ns byte, s string, w float64) {
	f.addHash(hash(ns, s), w)
}

func (f *features) addHash(h uint64, w float64) {
	x := f.m[h]
	x.count++
	x.weight = w
	f.m[h] = x
}

// project folds the features into v (len(v) buckets) and normalizes it.
func (f *features) project(v []float32) {
	if len(f.m) == 0 {
		f.add(nsEmpty, "", 1)
	}
	if cap(f.acc) < len(v) {
		f.acc = make([]float64, len(v))
	}
	acc := f.acc[:len(v)]
	clear(acc)
	for h, x := range f.m {
		w := x.weight * (1 + math.Log(x.count))
		m := mix(h)
		i := m % uint64(len(v))
		if m>>63 == 1 {
			w = -w
		}
		acc[i] += w
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	if norm == 0 {
		// Every feature cancelled out in its bucket: vanishingly rare, but
		// a unit vector is still owed.
		v[0] = 1
		return
	}
	norm = math.Sqrt(norm)
	for i, x := range acc {
		v[i] = float32(x / norm)
	}
}

// extract splits text into Latin words and CJK runs and records their
// features.
func extract(text string, f *features) {
	var word strings.Builder
	cjk := make([]rune, 0, 16)
	flushWord := func() {
		if word.Len() == 0 {
			return
		}
		addWord(word.String(), f)
		word.Reset()
	}
	flushCJK := func() {
		if len(cjk) == 0 {
			return
		}
		addCJK(cjk, f)
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			flushCJK()
			word.WriteRune(unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
}

// addWord records a word and its boundary-marked character n-grams. The
// n-grams of one word share a budget of gramWeight*sqrt(n) so that long
// words do not outweigh short ones by sheer n-gram count.
func addWord(w string, f *features) {
	ww := wordWeight
	if englishStop[w] {
		ww = stopWeight
	}
	f.add(nsWord, w, ww)
	if englishStop[w] {
		return // n-grams of function words only add noise
	}
	rs := []rune("<" + w + ">")
	var grams int
	for n := minGram; n <= maxGram; n++ {
		if len(rs) >= n {
			grams += len(rs) - n + 1
		}
	}
	if grams == 0 {
		return
	}
	gw := gramWeight / math.Sqrt(float64(grams))
	for n := minGram; n <= maxGram; n++ {
		for i := 0; i+n <= len(rs); i++ {
			f.addHash(hashRunes(nsGram, rs[i:i+n]), gw)
		}
	}
}

// addCJK records the characters and bigrams of an unspaced CJK run, the
// features Lucene's CJK analyzer indexes.
func addCJK(rs []rune, f *features) {
	var b [2 * utf8.UTFMax]byte
	for i, r := range rs {
		w := cjkUniWeight
		if cjkStop[r] {
			w *= stopWeight
		}
		n := utf8.EncodeRune(b[:], r)
		f.add(nsCJK, string(b[:n]), w)
		if i+1 < len(rs) {
			m := utf8.EncodeRune(b[n:], rs[i+1])
			w := cjkBigramWeight
			if cjkStop[r] && cjkStop[rs[i+1]] {
				w *= stopWeight
			}
			f.add(nsCJK, string(b[:n+m]), w)
		}
	}
}

// isCJK reports whether r belongs to a script written without spaces.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// hash is 64-bit FNV-1a over a namespace byte and s: stable across
// processes, unlike hash/maphash with a random seed.
func hash(ns byte, s string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	h ^= uint64(ns)
	h *= prime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// hashRunes equals hash(ns, string(rs)) without building the string.
func hashRunes(ns byte, rs []rune) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	h ^= uint64(ns)
	h *= prime
	var b [utf8.UTFMax]byte
	for _, r := range rs {
		n := utf8.EncodeRune(b[:], r)
		for _, c := range b[:n] {
			h ^= uint64(c)
			h *= prime
		}
	}
	return h
}

// mix is the splitmix64 finalizer: FNV's low bits are weak, and both the
// bucket (low bits) and the sign (top bit) are taken from the result.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// englishStop lists English function words. Question words and pronouns are
// kept out on purpose: in FAQ matching "who" versus "where" or "you" versus
// "I" often decides the intent.
var englishStop = setOf(
	"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by",
	"for", "with", "from", "as", "into", "about", "is", "are", "was", "were",
	"be", "been", "being", "am", "do", "does", "did", "has", "have", "had",
	"it", "its", "this", "that", "these", "those", "there", "then", "than",
	"so", "if", "s", "t", "d", "ll", "re", "ve", "m", "can", "could", "would",
	"should", "will", "shall", "may", "might", "just", "very", "really", "please",
)

// cjkStop lists Chinese particles that carry tone rather than content.
var cjkStop = func() map[rune]bool {
	m := make(map[rune]bool)
	for _, r := range "的了吗呢吧啊呀么嘛哦着得地之也就都还" {
		m[r] = true
	}
	return m
}()

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
