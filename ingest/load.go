package ingest

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Document is one loaded file, before splitting.
type Document struct {
	// ID is the stable document id: DocID(Path) as Parse sets it, or
	// FileDocID for files on disk (Ingest sets it).
	ID string
	// Path is the slash-separated path of the file relative to the
	// ingested folder; chunks carry it as retrieval.MetaOrigin.
	Path   string
	Source string  // category for the chunks; records may override it
	Title  string  // document title: first H1, HTML <title>, or the file name
	Hash   string  // "sha256:" and the hex SHA-256 of the file's bytes (MetaContentHash)
	Blocks []Block // content in document order; empty for an FAQ file
	// FAQ marks an FAQ file: its Entries go to the FAQ collection, one
	// chunk each, never among documents.
	FAQ     bool
	Entries []FAQEntry
	// Tables are the file's tables as a whole, in document order; their
	// rows are also among Blocks (see AddTable).
	Tables []Table
	// Warnings are the loader's notes on content it had to leave out
	// while the rest of the file was loaded, such as the pages of a PDF
	// without a text layer; Ingest and LoadFS copy them to
	// Report.Warnings.
	Warnings []string
}

// Block is a unit of loaded content: a heading section, a table row or a
// record. Text blocks are split further; table rows and records are kept
// whole unless they exceed the chunk size.
type Block struct {
	// Headings is the context path written before each chunk of the block,
	// outermost first (document title, then section headings).
	Headings    []string
	Title       string            // chunk title; "" means the joined Headings
	Text        string            // body text, without the Headings
	ContentType string            // retrieval.ContentText or ContentTableRow
	RecordID    string            // id given by the source (JSONL id field), "" if none
	Source      string            // per-record source (JSONL source field), "" if none
	Locator     string            // where the block is in its file (retrieval.MetaLocator)
	Meta        map[string]string // extra metadata copied to every chunk of the block
}

// Parse loads data as the file at path p (slash-separated), choosing the
// loader by extension: .md/.markdown, .txt, .csv, .tsv, .jsonl,
// .html/.htm, and the binary formats .xlsx, .pdf, .docx and .pptx (see
// DocOptions). A
// .jsonl or .csv file whose records have question and answer fields is an
// FAQ file (see ParseFAQ): the Document then has FAQ set and its Entries
// instead of Blocks. An unknown extension yields an error matching
// ErrUnsupported, content that is not UTF-8 text one matching ErrBinary,
// and a malformed file one matching ErrMalformed. A few invalid UTF-8
// bytes are replaced by U+FFFD and Windows line ends are normalised. The
// returned Document has ID, Path and Hash set; Source is left to the
// caller.
func Parse(p string, data []byte, o Options) (Document, error) {
	return parse(context.Background(), p, data, o, false)
}

// parse is Parse; asFAQ reads the file as an FAQ file whatever its content.
func parse(ctx context.Context, p string, data []byte, o Options, asFAQ bool) (Document, error) {
	p = path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "./"))
	doc := Document{ID: DocID(p), Path: p, Title: fileTitle(p), Hash: contentHash(data)}
	ext := strings.ToLower(path.Ext(p))
	if !Supported(p) {
		return doc, fmt.Errorf("%w: %q", ErrUnsupported, ext)
	}
	if ext == ".xlsx" {
		if asFAQ {
			return doc, fmt.Errorf("%w: %q is not an FAQ format (.jsonl or .csv)", ErrUnsupported, ext)
		}
		return doc, loadXLSX(&doc, data)
	}
	if isOffice(ext) && !asFAQ { // binary formats: PDF, DOCX, PPTX
		return doc, loadOffice(ctx, &doc, ext, data, o.Doc)
	}
	if err := checkText(data); err != nil {
		return doc, err
	}
	text := normalize(data)
	if asFAQ || isFAQ(ext, text, o.JSONL) {
		if ext != ".jsonl" && ext != ".csv" {
			return doc, fmt.Errorf("%w: %q is not an FAQ format (.jsonl or .csv)", ErrUnsupported, ext)
		}
		entries, err := parseFAQ(ext, text)
		doc.FAQ, doc.Entries = true, entries
		return doc, err
	}
	var err error
	switch ext {
	case ".md", ".markdown":
		loadMarkdown(&doc, text)
	case ".txt":
		loadText(&doc, text)
	case ".csv":
		err = loadCSV(&doc, text)
	case ".tsv":
		err = loadTSV(&doc, text)
	case ".jsonl":
		err = loadJSONL(&doc, text, o.JSONL)
	case ".html", ".htm":
		err = loadHTML(&doc, text)
	}
	return doc, err
}

// Supported reports whether Parse has a loader for the file name's extension.
func Supported(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".txt", ".csv", ".tsv", ".xlsx", ".jsonl", ".html", ".htm":
		return true
	}
	return isOffice(name)
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
	// unwrap joins hard-wrapped paragraphs (Markdown).
	unwrap bool
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
	if s.unwrap {
		raw = unwrap(raw)
	}
	body := cleanBody(raw)
	if body == "" {
		return
	}
	hs := s.headings()
	s.doc.Blocks = append(s.doc.Blocks, Block{Headings: hs, Text: body, ContentType: retrieval.ContentText,
		Locator: strings.Join(hs, " > ")})
}

// headings returns the open heading path, the document's title first.
func (s *sections) headings() []string {
	hs := append([]string(nil), s.path...)
	if len(hs) == 0 || hs[0] != s.doc.Title {
		hs = append([]string{s.doc.Title}, hs...)
	}
	return hs
}

// table closes the current section's prose and adds a table standing
// under the open heading (Markdown, HTML): it is named name, or by that
// heading (the document's title when there is none) when name is "", and
// located by the heading path, each row as "row N" counted from its first
// data row.
func (s *sections) table(name string, header []string, cells [][]string) {
	s.flush()
	hs := s.headings()
	if name == "" {
		name = hs[len(hs)-1]
	}
	t := Table{Name: name, Headings: hs, Locator: strings.Join(hs, " > "), Header: header}
	for i, c := range cells {
		t.Rows = append(t.Rows, Row{Cells: c, Locator: "row " + strconv.Itoa(i+1)})
	}
	s.doc.AddTable(t)
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
// heading path. The first level-1 heading, if any, is the title. A table
// (a header line, a delimiter row and the lines with cells after it)
// becomes a Table named by the heading it stands under (see
// sections.table); the prose around it stays prose. Hard-wrapped
// paragraphs are joined (see unwrap).
func loadMarkdown(doc *Document, text string) {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if lvl, h := atxHeading(l); lvl == 1 {
			doc.Title = h
			break
		}
	}
	s := sections{doc: doc, unwrap: true}
	fence := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
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
			if i+1 < len(lines) && isTableLine(l) && isDelimiterRow(lines[i+1]) {
				header, cells, n := markdownTable(lines[i:])
				s.table("", header, cells)
				i += n - 1
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
// blank line is taken as the title. Hard-wrapped paragraphs are joined (see
// unwrap). Its chunks have no locator.
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
	if body := cleanBody(unwrap(text)); body != "" {
		doc.Blocks = append(doc.Blocks, Block{Headings: []string{doc.Title}, Text: body, ContentType: retrieval.ContentText})
	}
}
