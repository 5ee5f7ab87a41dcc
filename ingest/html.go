package ingest

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// loadHTML extracts the visible text of an HTML page. Scripts, styles,
// navigation, footers and other non-content elements are dropped; headings h1-h6 open sections as
// in Markdown; block elements and <br> become line breaks, list items get a
// "- " marker. A table whose first row is a header (all <th>, or in
// <thead>) becomes a Table named by its <caption> or the heading it stands
// under, one row per data row (see sections.table); another table is text,
// its cells separated by " | ". The <title>, or else the first h1, is the
// document title.
func loadHTML(doc *Document, text string) error {
	root, err := html.Parse(strings.NewReader(text))
	if err != nil { // the parser is lenient; this is practically unreachable
		return fmt.Errorf("%w: html: %w", ErrMalformed, err)
	}
	if t := findText(root, atom.Title); t != "" {
		doc.Title = t
	} else if t := findText(root, atom.H1); t != "" {
		doc.Title = t
	}
	s := sections{doc: doc, trimLeft: true}
	walkHTML(&s, root)
	s.flush()
	return nil
}

// findText returns the collapsed text of the first element a in n.
func findText(n *html.Node, a atom.Atom) string {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return collapse(textOf(n))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findText(c, a); t != "" {
			return t
		}
	}
	return ""
}

// textOf concatenates the text nodes under n.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && skipped(n.DataAtom) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// collapse replaces runs of white space with one space and trims.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// skipped reports elements whose content is not page text: code, styling,
// embedded objects, and the navigation and footer boilerplate that every
// page of a site repeats.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Nav, atom.Footer,
		atom.Svg, atom.Math, atom.Iframe, atom.Object, atom.Canvas, atom.Button, atom.Select:
		return true
	}
	return false
}

// headingLevel returns 1-6 for h1-h6 and 0 otherwise.
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// block reports elements that start on a new line.
func block(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Aside, atom.Header,
		atom.Footer, atom.Nav, atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd,
		atom.Table, atom.Tr, atom.Blockquote, atom.Pre, atom.Figure, atom.Figcaption,
		atom.Form, atom.Fieldset, atom.Address, atom.Hr, atom.Caption, atom.Details, atom.Summary:
		return true
	}
	return false
}

func walkHTML(s *sections, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		// Keep word separation but not the source's line wrapping.
		t := strings.Join(strings.Fields(n.Data), " ")
		if t == "" {
			if n.Data != "" {
				s.body.WriteByte(' ')
			}
			return
		}
		if n.Data[0] == ' ' || n.Data[0] == '\n' || n.Data[0] == '\t' {
			s.body.WriteByte(' ')
		}
		s.body.WriteString(t)
		if last := n.Data[len(n.Data)-1]; last == ' ' || last == '\n' || last == '\t' {
			s.body.WriteByte(' ')
		}
		return
	case html.ElementNode:
		if skipped(n.DataAtom) {
			return
		}
		if lvl := headingLevel(n.DataAtom); lvl > 0 {
			s.heading(lvl, collapse(textOf(n)))
			return
		}
		if n.DataAtom == atom.Table {
			if caption, header, rows, ok := htmlTable(n); ok {
				s.table(caption, header, rows)
				return
			}
		}
		switch {
		case n.DataAtom == atom.Br:
			s.body.WriteByte('\n')
			return
		case n.DataAtom == atom.Li:
			breakLine(&s.body, 1)
			s.body.WriteString("- ")
		case n.DataAtom == atom.Td || n.DataAtom == atom.Th:
			if prevCell(n) {
				s.body.WriteString(" | ")
			}
		case n.DataAtom == atom.P:
			breakLine(&s.body, 2)
		case block(n.DataAtom):
			breakLine(&s.body, 1)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkHTML(s, c)
	}
	if n.Type == html.ElementNode && (block(n.DataAtom) || n.DataAtom == atom.P) {
		breakLine(&s.body, 1)
	}
}

// breakLine ends b with at least n line breaks (blanks after the last
// break do not count), so that nested block elements do not pile up
// empty lines.
func breakLine(b *strings.Builder, n int) {
	t := strings.TrimRight(b.String(), " \t")
	have := len(t) - len(strings.TrimRight(t, "\n"))
	if len(t) == 0 {
		return // nothing to separate from
	}
	for ; have < n; have++ {
		b.WriteByte('\n')
	}
}

// prevCell reports whether a table cell has a cell before it in its row.
func prevCell(n *html.Node) bool {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Td || p.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

// htmlTable reads a table with a header row: its caption, the header's
// cells and the data rows' cells (the text of each cell, collapsed).
// Nested tables are read as text of their cell. ok is false for a table
// whose first row is not a header (all <th>, or a row of <thead>) or that
// has no data row: such a table stays text.
func htmlTable(t *html.Node) (caption string, header []string, rows [][]string, ok bool) {
	headerRow := false
	var walk func(n *html.Node, inHead bool)
	walk = func(n *html.Node, inHead bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || skipped(c.DataAtom) {
				continue
			}
			switch c.DataAtom {
			case atom.Caption:
				caption = collapse(textOf(c))
			case atom.Thead:
				walk(c, true)
			case atom.Tbody, atom.Tfoot:
				walk(c, false)
			case atom.Tr:
				var cells []string
				allTH := true
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && (d.DataAtom == atom.Td || d.DataAtom == atom.Th) {
						cells = append(cells, collapse(textOf(d)))
						allTH = allTH && d.DataAtom == atom.Th
					}
				}
				if len(cells) == 0 {
					continue
				}
				if header == nil && rows == nil {
					header, headerRow = cells, inHead || allTH
					continue
				}
				rows = append(rows, cells)
			}
		}
	}
	walk(t, false)
	return caption, header, rows, headerRow && len(header) >= 2 && len(rows) > 0
}
