package feature

import (
	"unicode"
	"unicode/utf8"
)

// class is a rune's class, as the project analyzer (analysis.Unicode)
// draws it: a word rune (letters, digits, combining marks outside the CJK
// scripts), a CJK rune (Han, Hiragana, Katakana, Hangul, and the marks 々
// and ー), or a separator (everything else, invalid bytes included).
type class uint8

const (
	sep class = iota
	word
	cjk
)

var asciiClass = func() (t [utf8.RuneSelf]class) {
	for c := '0'; c <= '9'; c++ {
		t[c] = word
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = word, word
	}
	return t
}()

// Lookup tables for the blocks of CJK punctuation (U+3000-U+303F) and of
// half- and full-width forms (U+FF00-U+FFEF), which Chinese text is full of.
var (
	symClass  = tableOf(0x3000, 0x40)
	fullClass = tableOf(0xFF00, 0xF0)
)

func tableOf(base rune, n int) []class {
	t := make([]class, n)
	for i := range t {
		t[i] = slowClass(base + rune(i))
	}
	return t
}

func runeClass(r rune) class {
	switch {
	case r < utf8.RuneSelf:
		return asciiClass[r]
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x3041 && r <= 0x30FF && r != 0x30FB && r != 0x30A0:
		return cjk
	case r >= 0x3000 && r < 0x3040:
		return symClass[r-0x3000]
	case r >= 0xFF00 && r < 0xFFF0:
		return fullClass[r-0xFF00]
	}
	return slowClass(r)
}

func slowClass(r rune) class {
	switch {
	case r == utf8.RuneError:
		return sep
	case r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 0x3005 || r == 0x30FC || r == 0xFF70):
		return cjk
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
		return word
	}
	return sep
}

// decode is utf8.DecodeRuneInString with the three-byte case (CJK) inline.
func decode(s string, i int) (rune, int) {
	if i+2 < len(s) {
		c0, c1, c2 := s[i], s[i+1], s[i+2]
		if c0&0xF0 == 0xE0 && c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
			r := rune(c0&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return r, 3
			}
		}
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n <= 1 {
		return utf8.RuneError, 1 // an invalid byte: a separator
	}
	return r, n
}

// next finds the first token of text at or after byte i. A word token is
// a maximal run of word runes, returned as its span [start, end); a CJK
// token is one CJK rune r at [start, end). kind is sep when the text has
// no more tokens.
func next(text string, i int) (start, end int, r rune, kind class) {
	for i < len(text) {
		var c class
		size := 1
		if b := text[i]; b < utf8.RuneSelf {
			c = asciiClass[b]
		} else {
			r, size = decode(text, i)
			c = runeClass(r)
		}
		switch c {
		case cjk:
			return i, i + size, r, cjk
		case word:
			start = i
			i += size
			for i < len(text) {
				if b := text[i]; b < utf8.RuneSelf {
					if asciiClass[b] != word {
						break
					}
					i++
					continue
				}
				r, size := decode(text, i)
				if runeClass(r) != word {
					break
				}
				i += size
			}
			return start, i, 0, word
		}
		i += size
	}
	return len(text), len(text), 0, sep
}
