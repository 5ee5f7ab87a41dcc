package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// clean makes text from documents and models safe to print on a terminal:
// control characters (escape sequences that could retitle the window, clear
// the screen or move the cursor, and the C1 range) are replaced by U+FFFD;
// newlines and tabs are kept.
func clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unsafeRune(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func unsafeRune(r rune) bool {
	switch r {
	case '\n', '\t':
		return false
	case '\u2028', '\u2029', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069':
		return true // line separators and bidirectional overrides
	}
	return unicode.IsControl(r)
}

// escapeTerminal rewrites the characters of encoded JSON that unsafeRune
// refuses and encoding/json leaves as they are (C1 controls, line
// separators, bidirectional overrides) as \uXXXX escapes: the same text
// once decoded, inert on a terminal. Outside strings JSON holds ASCII
// only, so every such character is inside a string.
func escapeTerminal(b []byte) []byte {
	if utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r >= 0x80 && unsafeRune(r) }) {
		return b
	}
	var out strings.Builder
	for _, r := range string(b) {
		if r >= 0x80 && unsafeRune(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}
