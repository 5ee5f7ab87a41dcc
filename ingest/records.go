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

// loadCSV makes one table-row block per data row. The first row is the
// header; each row's text keeps the header names ("费用类型: 差旅; 审批人:
// 部门负责人") so that a row retrieved alone still says what its values
// mean. Empty cells are left out.
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
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	for row := 1; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: csv: %w", ErrMalformed, err)
		}
		var b strings.Builder
		for i, v := range rec {
			v = strings.Join(strings.Fields(v), " ")
			if v == "" {
				continue
			}
			name := ""
			if i < len(header) {
				name = header[i]
			}
			if name == "" {
				name = "column " + strconv.Itoa(i+1)
			}
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(name)
			b.WriteString(": ")
			b.WriteString(v)
		}
		if b.Len() == 0 {
			continue
		}
		doc.Blocks = append(doc.Blocks, Block{
			Headings:    []string{doc.Title},
			Title:       doc.Title,
			Text:        b.String(),
			ContentType: retrieval.ContentTableRow,
			Meta:        map[string]string{"row": strconv.Itoa(row)},
		})
	}
}

// JSONLOptions says which fields of a JSON-lines record hold what. The zero
// value reads "text" as the text or, for records without it, "question" and
// "answer" as an FAQ entry; "id", "title" and "source" as id, title and
// source.
type JSONLOptions struct {
	// TextFields are joined with a newline to form the text. Empty means
	// "text", or "question"+"answer" (content type FAQ) when a record has no
	// "text".
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
// other than the text fields are copied into Meta.
func loadJSONL(doc *Document, text string, o JSONLOptions) error {
	idField := cmp.Or(o.IDField, "id")
	titleField := cmp.Or(o.TitleField, "title")
	sourceField := cmp.Or(o.SourceField, "source")
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
		fields, ctype := o.TextFields, retrieval.ContentText
		if len(fields) == 0 {
			fields = []string{"text"}
			if _, ok := rec["text"]; !ok {
				fields, ctype = []string{"question", "answer"}, retrieval.ContentFAQ
			}
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
			ContentType: ctype,
			RecordID:    scalar(rec[idField]),
			Title:       scalar(rec[titleField]),
			Meta:        map[string]string{},
		}
		if sourceField != "-" {
			b.Source = scalar(rec[sourceField])
		}
		for k, v := range rec {
			if s := scalar(v); s != "" && !used[k] {
				b.Meta[k] = s
			}
		}
		if ctype == retrieval.ContentFAQ {
			// The pipeline may answer an exact FAQ hit directly.
			b.Meta["question"] = scalar(rec["question"])
			b.Meta["answer"] = scalar(rec["answer"])
			if b.Title == "" {
				b.Title = b.Meta["question"]
			}
		} else {
			b.Headings = []string{cmp.Or(b.Title, doc.Title)}
		}
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
