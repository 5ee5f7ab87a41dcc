package ingest

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Document is one loaded file, before splitting.
type Document struct {
	ID     string  // stable document id: DocID(Path)
	Path   string  // slash-separated path relative to the ingestion root
	Source string  // category for the chunks; records may override it
	Title  string  // document title: first H1, HTML <title>, or the file name
	Blocks []Block // content in document order
}

// Block is a unit of loaded content: a heading section, a table row or a
// record. Text blocks are split further; table rows and FAQ records are kept
// whole unless they exceed the chunk size.
type Block struct {
	// Headings is the context path written before each chunk of the block,
	// outermost first (document title, then section headings). Empty for
	// records that carry their own context, such as FAQ entries.
	Headings    []string
	Title       string            // chunk title; "" means the joined Headings
	Text        string            // body text, without the Headings
	ContentType string            // retrieval.ContentText, ContentTableRow or ContentFAQ
	RecordID    string            // id given by the source (JSONL id field), "" if none
	Source      string            // per-record source (JSONL source field), "" if none
	Meta        map[string]string // extra metadata copied to every chunk of the block
}

// Parse loads data as the file at path p (slash-separated), choosing the
// loader by extension: .md/.markdown, .txt, .csv, .jsonl, .html/.htm. An
// unknown extension yields an error matching ErrUnsupported and a malformed
// file one matching ErrMalformed. Invalid UTF-8 is replaced by U+FFFD and
// Windows line ends are normalised. The returned Document has ID and Path
// set; Source is left to the caller.
func Parse(p string, data []byte, o Options) (Document, error) {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	doc := Document{ID: DocID(p), Path: p, Title: fileTitle(p)}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := string(data)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\ufffd")
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var err error
	switch ext := strings.ToLower(path.Ext(p)); ext {
	case ".md", ".markdown":
		loadMarkdown(&doc, text)
	case ".txt":
		loadText(&doc, text)
	case ".csv":
		err = loadCSV(&doc, text)
	case ".jsonl":
		err = loadJSONL(&doc, text, o.JSONL)
	case ".html", ".htm":
		err = loadHTML(&doc, text)
	default:
		return doc, fmt.Errorf("%w: %q", ErrUnsupported, ext)
	}
	return doc, err
}

// Supported reports whether Parse has a loader for the file name's extension.
func Supported(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".txt", ".csv", ".jsonl", ".html", ".htm":
		return true
	}
	return false
}

// fileTitle derives a title from a file name: "travel_policy.md" gives
// "travel policy".
func fileTitle(p string) string {
	base := path.Base(p)
	base = strings.TrimSuffix(base, path.Ext(base))
	return strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(base))
}

// sections accumulates heading sections for the Markdown and HTML loaders.
type sections struct {
	doc    *Document
	levels []int    // heading levels of the open path
	path   []string // heading texts of the open path
	body   strings.Builder
	// trimLeft drops leading blanks of lines, for sources (HTML) whose
	// indentation is markup layout rather than content.
	trimLeft bool
}

// heading closes the current section and opens one at the given level.
func (s *sections) heading(level int, text string) {
	s.flush()
	for len(s.levels) > 0 && s.levels[len(s.levels)-1] >= level {
		s.levels = s.levels[:len(s.levels)-1]
		s.path = s.path[:len(s.path)-1]
	}
	if text == "" {
		return
	}
	s.levels = append(s.levels, level)
	s.path = append(s.path, text)
}

// flush emits the current section's body as a text block, if it has any.
func (s *sections) flush() {
	raw := s.body.String()
	s.body.Reset()
	if s.trimLeft {
		lines := strings.Split(raw, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, " \t")
		}
		raw = strings.Join(lines, "\n")
	}
	body := cleanBody(raw)
	if body == "" {
		return
	}
	hs := append([]string(nil), s.path...)
	if len(hs) == 0 || hs[0] != s.doc.Title {
		hs = append([]string{s.doc.Title}, hs...)
	}
	s.doc.Blocks = append(s.doc.Blocks, Block{Headings: hs, Text: body, ContentType: retrieval.ContentText})
}

// cleanBody trims every line and collapses runs of blank lines into one.
func cleanBody(s string) string {
	lines := strings.Split(s, "\n")
	var b strings.Builder
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if strings.TrimSpace(l) == "" {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
			if blank {
				b.WriteByte('\n')
			}
		}
		blank = false
		b.WriteString(l)
	}
	return b.String()
}

// loadMarkdown splits Markdown at ATX headings (# to ######) outside fenced
// code blocks; each heading section becomes a block whose Headings are the
// heading path. The first level-1 heading, if any, is the title.
func loadMarkdown(doc *Document, text string) {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if lvl, h := atxHeading(l); lvl == 1 {
			doc.Title = h
			break
		}
	}
	s := sections{doc: doc}
	fence := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		default:
			if lvl, h := atxHeading(l); lvl > 0 {
				s.heading(lvl, h)
				continue
			}
		}
		s.body.WriteString(l)
		s.body.WriteByte('\n')
	}
	s.flush()
}

// atxHeading returns the level and text of an ATX heading line, or 0.
func atxHeading(l string) (int, string) {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return 0, "" // indented code
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0, ""
	}
	h := strings.TrimSpace(t[n:])
	h = strings.TrimSpace(strings.TrimRight(h, "#"))
	return n, h
}

// loadText loads plain text as one block. A short first line followed by a
// blank line is taken as the title.
func loadText(doc *Document, text string) {
	text = strings.TrimSpace(text)
	if first, rest, ok := strings.Cut(text, "\n\n"); ok && !strings.Contains(first, "\n") {
		f := strings.TrimSpace(first)
		last, _ := utf8.DecodeLastRuneInString(f)
		if n := utf8.RuneCountInString(f); n > 0 && n <= 60 && !strings.ContainsRune(".!?;:,。！？；：，", last) {
			doc.Title = f
			text = rest
		}
	}
	if body := cleanBody(text); body != "" {
		doc.Blocks = append(doc.Blocks, Block{Headings: []string{doc.Title}, Text: body, ContentType: retrieval.ContentText})
	}
}
