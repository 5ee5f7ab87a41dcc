package ingest

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
)

// rows numbers the records of a CSV file as a spreadsheet shows its rows:
// a blank line is an empty row, and a quoted cell over several lines keeps
// its record on one row.
type rows struct {
	r        *csv.Reader
	row, end int // row of the last record; line its last cell ends on
}

// next returns the row of rec, the record just read.
func (n *rows) next(rec []string) int {
	line, _ := n.r.FieldPos(0)
	if n.row == 0 {
		n.row = line
	} else {
		n.row += line - n.end
	}
	last, _ := n.r.FieldPos(len(rec) - 1)
	n.end = last + strings.Count(rec[len(rec)-1], "\n")
	return n.row
}

// loadCSV makes one table-row block per data row. The first row is the
// header; each row's text keeps the header names ("费用类型: 差旅; 审批人:
// 部门负责人") so that a row retrieved alone still says what its values
// mean. Empty cells are left out. A row's locator is "row N" numbered as a
// spreadsheet shows it: the header is row 1, the first data row row 2
// (blank lines count as rows).
func loadCSV(doc *Document, text string) error {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1 // ragged rows are kept; extra cells get column names
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: csv header: %w", ErrMalformed, err)
	}
	rows := rows{r: r}
	rows.next(header)
	t := Table{Header: header}
	for i := range t.Header {
		t.Header[i] = strings.TrimSpace(t.Header[i])
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: csv: %w", ErrMalformed, err)
		}
		t.Rows = append(t.Rows, Row{Cells: rec, Locator: "row " + strconv.Itoa(rows.next(rec))})
	}
	doc.AddTable(t)
	return nil
}

// JSONLOptions says which fields of a JSON-lines record hold what. The zero
// value reads "text" as the text and "id", "title" and "source" as id,
// title and source. (A file whose records have question and answer fields
// instead is an FAQ file; see ParseFAQ.)
type JSONLOptions struct {
	// TextFields are joined with a newline to form the text. Empty means
	// "text". Setting it also keeps a file from being taken for an FAQ.
	TextFields []string
	IDField    string // "" means "id"
	TitleField string // "" means "title"
	// SourceField names a per-record source that overrides the folder's
	// (but not Options.Source). "" means "source"; "-" disables it.
	SourceField string
}

// loadJSONL makes one block per JSON object line. Blank lines are skipped;
// a line that is not a JSON object, or has none of the text fields, makes
// the whole file malformed, reported with its line number. Scalar fields
// other than the text fields are copied into Meta. A record's locator is
// "id X" when it has an id, else "line N".
func loadJSONL(doc *Document, text string, o JSONLOptions) error {
	idField := cmp.Or(o.IDField, "id")
	titleField := cmp.Or(o.TitleField, "title")
	sourceField := cmp.Or(o.SourceField, "source")
	fields := o.TextFields
	if len(fields) == 0 {
		fields = []string{"text"}
	}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrMalformed, n+1, err)
		}
		if rec == nil {
			return fmt.Errorf("%w: line %d: not a JSON object", ErrMalformed, n+1)
		}
		var parts []string
		used := map[string]bool{}
		for _, f := range fields {
			used[f] = true
			if s := strings.TrimSpace(scalar(rec[f])); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			return fmt.Errorf("%w: line %d: no text in fields %v", ErrMalformed, n+1, fields)
		}
		b := Block{
			Text:        strings.Join(parts, "\n"),
			ContentType: retrieval.ContentText,
			RecordID:    scalar(rec[idField]),
			Title:       scalar(rec[titleField]),
			Locator:     "line " + strconv.Itoa(n+1),
			Meta:        map[string]string{},
		}
		if b.RecordID != "" {
			b.Locator = "id " + b.RecordID
		}
		if sourceField != "-" {
			b.Source = scalar(rec[sourceField])
		}
		for k, v := range rec {
			if s := scalar(v); s != "" && !used[k] {
				b.Meta[k] = s
			}
		}
		b.Headings = []string{cmp.Or(b.Title, doc.Title)}
		doc.Blocks = append(doc.Blocks, b)
	}
	return nil
}

// scalar renders a JSON string, number or bool; anything else gives "".
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// loadTSV reads a tab-separated file as loadCSV reads a CSV file: the first
// line is the header, each later non-blank line a row located "row N" by
// its line. Cells are split at tabs only; quotes are text, except that a
// cell wholly in double quotes (as spreadsheets export one) loses them
// and its doubled quotes are single.
func loadTSV(doc *Document, text string) error {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var t Table
	for n, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		cells := strings.Split(l, "\t")
		for i, c := range cells {
			c = strings.TrimSpace(c)
			if len(c) >= 2 && c[0] == '"' && c[len(c)-1] == '"' {
				c = strings.ReplaceAll(c[1:len(c)-1], `""`, `"`)
			}
			cells[i] = c
		}
		if t.Header == nil {
			t.Header = cells
			continue
		}
		t.Rows = append(t.Rows, Row{Cells: cells, Locator: "row " + strconv.Itoa(n+1)})
	}
	if t.Header != nil {
		doc.AddTable(t)
	}
	return nil
}
