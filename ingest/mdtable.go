package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isTableLine reports whether l can be a row of a Markdown (GFM) table: it
// has a cell separator that is not escaped.
func isTableLine(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && strings.Contains(strings.ReplaceAll(t, `\|`, ""), "|")
}

// isDelimiterRow reports whether l is the delimiter row under a table's
// header: cells of dashes with optional alignment colons ("|---|:--:|").
func isDelimiterRow(l string) bool {
	if !isTableLine(l) {
		return false
	}
	cells := tableCells(l)
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// tableCells splits a table line into its trimmed cells; the outer pipes
// are optional and "\|" is a pipe inside a cell.
func tableCells(l string) []string {
	t := strings.TrimSpace(l)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// markdownTable reads the table whose header is lines[0] and delimiter
// row lines[1], up to the first line that is not a table line. It returns
// the header, the data rows, and the number of lines consumed.
func markdownTable(lines []string) (header []string, rows [][]string, n int) {
	header = tableCells(lines[0])
	n = 2
	for ; n < len(lines) && isTableLine(lines[n]); n++ {
		rows = append(rows, tableCells(lines[n]))
	}
	return header, rows, n
}

// unwrap joins the lines of hard-wrapped paragraphs: a single line break
// inside a paragraph becomes a space, or nothing between two CJK
// characters. Only a line that looks cut by a wrap is joined to the next
// (see wrapped). Blank lines, headings, list items, block quotes, table
// rows and fenced code keep their breaks.
func unwrap(text string) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	fence := ""
	joinable := false // the previous line can take a continuation
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			b.WriteString(l)
			b.WriteByte('\n')
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			joinable = false
			b.WriteString(l)
			b.WriteByte('\n')
			continue
		}
		if joinable && t != "" && !startsBlock(t) {
			s := strings.TrimRight(b.String(), "\n")
			b.Reset()
			b.WriteString(s)
			last, _ := utf8.DecodeLastRuneInString(s)
			first, _ := utf8.DecodeRuneInString(t)
			if !(wideRune(last) && wideRune(first)) {
				b.WriteByte(' ')
			}
			b.WriteString(t)
			b.WriteByte('\n')
		} else {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		joinable = t != "" && !isTableLine(t) && !isHeadingLine(t) && wrapped(l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// startsBlock reports whether trimmed line t opens a block of its own
// rather than continuing a paragraph.
func startsBlock(t string) bool {
	if isHeadingLine(t) || isTableLine(t) || strings.HasPrefix(t, ">") {
		return true
	}
	if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	if strings.Trim(t, "-") == "" || strings.Trim(t, "=") == "" || strings.Trim(t, "*") == "" {
		return true // rules and setext underlines
	}
	digits := 0
	for digits < len(t) && t[digits] >= '0' && t[digits] <= '9' {
		digits++
	}
	if digits > 0 && digits <= 9 && digits+1 < len(t) && (t[digits] == '.' || t[digits] == ')') && t[digits+1] == ' ' {
		return true
	}
	r, _ := utf8.DecodeRuneInString(t)
	return strings.ContainsRune("•·●○■□◆", r)
}

// isHeadingLine reports whether trimmed line t is an ATX heading.
func isHeadingLine(t string) bool {
	lvl, _ := atxHeading(t)
	return lvl > 0
}

// wideRune reports whether r is written without spaces around it: CJK
// characters and the full-width punctuation that goes with them.
func wideRune(r rune) bool {
	return isCJK(r) || unicode.In(r, unicode.Han) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// minWrapWidth is the display width (a CJK character counting two) from
// which a line can be one cut by a hard wrap; shorter lines are kept as
// their author broke them.
const minWrapWidth = 40

// wrapped reports whether line l looks cut by a hard wrap: it is at least
// minWrapWidth columns wide and does not end a sentence, nor in a Markdown
// hard break (two spaces or a backslash).
func wrapped(l string) bool {
	if strings.HasSuffix(l, "  ") {
		return false
	}
	t := strings.TrimSpace(l)
	last, _ := utf8.DecodeLastRuneInString(t)
	if strings.ContainsRune(`.!?:\。！？：`, last) {
		return false
	}
	w := 0
	for _, r := range t {
		w++
		if wideRune(r) {
			w++
		}
	}
	return w >= minWrapWidth
}
