package ingest

import (
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Table is a table found in a file, whatever its format: a CSV or TSV
// file, a Markdown table, a spreadsheet sheet, or a table reconstructed
// from a PDF or Word document. Every loader hands its tables to
// Document.AddTable, so that a row is one chunk (its cells as
// "header: value" pairs) and the whole table can also be loaded as
// records.
type Table struct {
	// Name is what the table is called: a sheet's name, a caption, or the
	// heading it stands under. "" means the document's title.
	Name string
	// Headings is the heading path the table stands under, outermost
	// first; nil means the document's title alone.
	Headings []string
	// Locator says where the table is in its file ("page 3", "sheet
	// Fees"); each row's own locator is appended to it.
	Locator string
	Header  []string // column names, trimmed; a missing name becomes "column N"
	Rows    []Row
}

// Row is one data row of a Table.
type Row struct {
	Cells []string
	// Locator is where the row is in its file as a person would find it
	// ("row 5"); "" numbers rows from 1 in table order.
	Locator string
}

// Column returns the name of column i: the header's name, or "column N"
// (1-based) when the header has none.
func (t Table) Column(i int) string {
	if i < len(t.Header) {
		if h := strings.TrimSpace(t.Header[i]); h != "" {
			return h
		}
	}
	return "column " + strconv.Itoa(i+1)
}

// RowText renders a row as "header: value" pairs joined by "; ", leaving
// out empty cells, so that a row retrieved alone still says what each of
// its values means. Whitespace inside a cell is folded to single spaces.
func (t Table) RowText(r Row) string {
	var b strings.Builder
	for i, v := range r.Cells {
		v = strings.Join(strings.Fields(v), " ")
		if v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(t.Column(i))
		b.WriteString(": ")
		b.WriteString(v)
	}
	return b.String()
}

// AddTable records t in d.Tables and appends one table-row block per
// non-empty row, titled by the table's name and located by its row.
func (d *Document) AddTable(t Table) {
	name := t.Name
	if name == "" {
		name = d.Title
	}
	headings := t.Headings
	if len(headings) == 0 {
		headings = []string{d.Title}
	}
	d.Tables = append(d.Tables, t)
	for i, r := range t.Rows {
		text := t.RowText(r)
		if text == "" {
			continue
		}
		loc := r.Locator
		if loc == "" {
			loc = "row " + strconv.Itoa(i+1)
		}
		if t.Locator != "" {
			loc = t.Locator + " > " + loc
		}
		d.Blocks = append(d.Blocks, Block{
			Headings:    headings,
			Title:       name,
			Text:        text,
			ContentType: retrieval.ContentTableRow,
			Locator:     loc,
		})
	}
}
