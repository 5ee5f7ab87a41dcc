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
// a maximal run of word runes, or a number with thousands separators (see
// thousands), returned as its span [start, end); a CJK token is one CJK
// rune r at [start, end). kind is sep when the text has
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
			if i < len(text) && i-start <= 9 {
				i = thousands(text, start, i)
			}
			return start, i, 0, word
		}
		i += size
	}
	return len(text), len(text), 0, sep
}

// digitAt returns the size of the decimal digit (ASCII or full-width) at
// text[i], or 0 when there is none.
func digitAt(text string, i int) int {
	if i < len(text) && '0' <= text[i] && text[i] <= '9' {
		return 1
	}
	if i+2 < len(text) && text[i] == 0xEF && text[i+1] == 0xBC && 0x90 <= text[i+2] && text[i+2] <= 0x99 {
		return 3
	}
	return 0
}

// sepAt returns the size of the thousands separator (',' or its
// full-width form '，') at text[i], or 0 when there is none.
func sepAt(text string, i int) int {
	if i < len(text) && text[i] == ',' {
		return 1
	}
	if i+2 < len(text) && text[i] == 0xEF && text[i+1] == 0xBC && text[i+2] == 0x8C {
		return 3
	}
	return 0
}

// thousands extends the word token text[start:end] over thousands
// separators: when the token is one to three digits (ASCII or full-width)
// and is followed by a separator (',' or '，') and exactly three digits
// that end a word, and so on ("5,000", "1,000,000", "５，０００", "5,000元"),
// the groups join into one number token. It returns the new end (end
// itself when nothing joins: "1,2", "2024,2025", "5,000x").
func thousands(text string, start, end int) int {
	for i, k := start, 0; i < end; k++ {
		d := digitAt(text, i)
		if d == 0 || k == 3 {
			return end
		}
		i += d
	}
	for {
		i := end + sepAt(text, end)
		if i == end {
			return end
		}
		for range 3 {
			d := digitAt(text, i)
			if d == 0 {
				return end
			}
			i += d
		}
		if i < len(text) {
			if b := text[i]; b < utf8.RuneSelf {
				if asciiClass[b] == word {
					return end
				}
			} else if r, _ := decode(text, i); runeClass(r) == word {
				return end
			}
		}
		end = i
	}
}
