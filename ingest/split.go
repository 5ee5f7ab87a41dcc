package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default splitter sizes, in runes. 500 runes hold a full paragraph of
// Chinese policy text (about 250 words of English) while staying well under
// the input window of common embedding models; 80 runes of overlap carry
// one or two sentences of context across a cut.
const (
	DefaultChunkSize = 500
	DefaultOverlap   = 80
)

// Splitter cuts text into chunks of at most ChunkSize runes. It prefers the
// largest natural boundary that yields pieces small enough: paragraph
// breaks, then line breaks, then sentence ends (。！？； and Latin . ! ? ;
// followed by a space), then clause marks (，、：, :), then spaces, and
// only as a last resort a rune boundary. Consecutive chunks share up to
// Overlap runes, taken from whole pieces when they fit.
//
// The zero value uses DefaultChunkSize and DefaultOverlap. A negative
// Overlap disables overlap; an Overlap not smaller than ChunkSize is clamped
// to ChunkSize/2 so that every chunk makes progress. Splitter is a value
// type and safe for concurrent use.
type Splitter struct {
	ChunkSize int // maximum runes per chunk; 0 means DefaultChunkSize
	Overlap   int // runes shared by consecutive chunks; 0 means DefaultOverlap, < 0 means none
}

func (s Splitter) sizes() (size, overlap int) {
	size, overlap = s.ChunkSize, s.Overlap
	if size <= 0 {
		size = DefaultChunkSize
	}
	switch {
	case overlap == 0:
		overlap = DefaultOverlap
	case overlap < 0:
		overlap = 0
	}
	if overlap >= size {
		overlap = size / 2
	}
	return size, overlap
}

// Split returns the chunks of text, trimmed of surrounding white space.
// It never returns an empty chunk, never cuts inside a UTF-8 sequence, and
// returns nil for text that is empty or only white space.
func (s Splitter) Split(text string) []string {
	var out []string
	for _, sp := range s.spans(text) {
		if t := strings.TrimSpace(text[sp.start:sp.end]); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// span is a half-open byte range of the split text.
type span struct{ start, end int }

// boundary kinds, from the most to the least preferred cut.
const (
	cutParagraph = iota
	cutLine
	cutSentence
	cutClause
	cutSpace
	cutRune
)

// spans returns the byte ranges of the chunks of text. The ranges start and
// end on rune boundaries, cover every byte of text at least once, are in
// order, and each holds at most size runes.
func (s Splitter) spans(text string) []span {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	size, overlap := s.sizes()
	atoms := splitAtoms(text, 0, len(text), cutParagraph, size, nil)
	return mergeAtoms(text, atoms, size, overlap)
}

// splitAtoms cuts text[start:end] into contiguous pieces of at most size
// runes, using the boundary kind level and, for pieces still too long, the
// next kinds in turn.
func splitAtoms(text string, start, end, level, size int, dst []span) []span {
	if utf8.RuneCountInString(text[start:end]) <= size {
		return append(dst, span{start, end})
	}
	if level == cutRune {
		return splitRunes(text, start, end, size, dst)
	}
	cuts := boundaries(text[start:end], level)
	if len(cuts) == 0 {
		return splitAtoms(text, start, end, level+1, size, dst)
	}
	prev := start
	for _, c := range cuts {
		dst = splitAtoms(text, prev, start+c, level+1, size, dst)
		prev = start + c
	}
	if prev < end {
		dst = splitAtoms(text, prev, end, level+1, size, dst)
	}
	return dst
}

// splitRunes cuts text[start:end] every size runes.
func splitRunes(text string, start, end, size int, dst []span) []span {
	n, prev := 0, start
	for i := range text[start:end] {
		if n == size {
			dst = append(dst, span{prev, start + i})
			prev, n = start+i, 0
		}
		n++
	}
	return append(dst, span{prev, end})
}

// boundaries returns the byte offsets, strictly inside s, just after each
// boundary of the given kind. A boundary's separator stays with the piece
// before it, so a sentence keeps its full stop.
func boundaries(s string, level int) []int {
	var cuts []int
	add := func(i int) {
		if i > 0 && i < len(s) {
			cuts = append(cuts, i)
		}
	}
	switch level {
	case cutParagraph, cutLine:
		sep := "\n"
		if level == cutParagraph {
			sep = "\n\n"
		}
		for i := 0; ; {
			j := strings.Index(s[i:], sep)
			if j < 0 {
				break
			}
			// Absorb a run of newlines so a cut falls before the next text.
			k := i + j + len(sep)
			for k < len(s) && s[k] == '\n' {
				k++
			}
			add(k)
			i = k
		}
	default:
		prevR := rune(-1)
		for i, r := range s {
			_, w := utf8.DecodeRuneInString(s[i:])
			next := i + w
			switch level {
			case cutSentence:
				switch r {
				case '。', '！', '？', '；', '…':
					add(next)
				case '.', '!', '?', ';':
					if next < len(s) && (s[next] == ' ' || s[next] == '\t') && !unicode.IsDigit(prevR) {
						add(next + 1)
					}
				}
			case cutClause:
				switch r {
				case '，', '、', '：':
					add(next)
				case ',', ':':
					if next < len(s) && s[next] == ' ' {
						add(next + 1)
					}
				}
			case cutSpace:
				if unicode.IsSpace(r) {
					add(next)
				}
			}
			prevR = r
		}
	}
	return cuts
}

// mergeAtoms packs consecutive atoms into chunks of at most size runes.
// Each chunk after the first starts with the tail of the previous one: the
// last whole atoms that fit in overlap runes or, when the last atom alone is
// longer, its last overlap runes moved forward to a word boundary.
func mergeAtoms(text string, atoms []span, size, overlap int) []span {
	runes := make([]int, len(atoms))
	for i, a := range atoms {
		runes[i] = utf8.RuneCountInString(text[a.start:a.end])
	}
	var out []span
	start := atoms[0].start
	for i := 0; i < len(atoms); {
		n := utf8.RuneCountInString(text[start:atoms[i].start]) // carried overlap
		if n+runes[i] > size {
			// The overlap leaves no room for the next atom: drop as much of
			// it as needed, keeping the rest.
			start = tailStart(text, start, atoms[i].start, size-runes[i])
			n = utf8.RuneCountInString(text[start:atoms[i].start])
		}
		j := i
		for j < len(atoms) && n+runes[j] <= size {
			n += runes[j]
			j++
		}
		out = append(out, span{start, atoms[j-1].end})
		if j == len(atoms) {
			break
		}
		start = overlapStart(text, atoms, runes, out[len(out)-1].start, j, overlap)
		i = j
	}
	return out
}

// overlapStart returns where the chunk after atoms[..next) begins: at the
// earliest atom of the previous chunk (which began at chunkStart) such that
// the atoms up to next fit in overlap runes, or inside the last atom.
func overlapStart(text string, atoms []span, runes []int, chunkStart, next, overlap int) int {
	if overlap <= 0 {
		return atoms[next].start
	}
	k, n := next, 0
	for k > 0 && atoms[k-1].start >= chunkStart && n+runes[k-1] <= overlap {
		n += runes[k-1]
		k--
	}
	if k < next && strings.TrimSpace(text[atoms[k].start:atoms[next].start]) != "" {
		return atoms[k].start
	}
	from := max(chunkStart, atoms[next-1].start)
	return tailStart(text, from, atoms[next].start, overlap)
}

// tailStart returns the start of the last at most n runes of text[from:to].
// The start moves forward to just after the first line break or sentence
// end (or failing that, clause mark) inside that tail, when there is one,
// and otherwise past the first
// non-word rune, so that an overlap does not begin mid-sentence or mid-word.
func tailStart(text string, from, to, n int) int {
	if n <= 0 {
		return to
	}
	start := to
	for c := 0; c < n && start > from; c++ {
		_, w := utf8.DecodeLastRuneInString(text[from:start])
		start -= w
	}
	if start == from {
		return start
	}
	tail := text[start:to]
	for _, level := range []int{cutLine, cutSentence, cutClause} {
		if cuts := boundaries(tail, level); len(cuts) > 0 {
			return start + cuts[0]
		}
	}
	// Only a Latin word can be cut mid-way; CJK text may start anywhere.
	r, _ := utf8.DecodeLastRuneInString(text[from:start])
	if !isWordRune(r) {
		return start
	}
	for i, r := range tail {
		if !isWordRune(r) {
			return start + i
		}
	}
	return start
}

// isWordRune reports whether r belongs to a space-delimited word (a Latin,
// Greek, Cyrillic... letter or a digit), where a cut would split the word.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isCJK(r)
}

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
}
