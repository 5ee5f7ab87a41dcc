package ingest

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// FAQEntry is one question of an FAQ collection with its standard answer.
type FAQEntry struct {
	ID       string `json:"id,omitempty"`     // unique within its file; "" when the file gives none
	Question string `json:"question"`         // what is embedded and searched
	Answer   string `json:"answer"`           // returned as is on a direct FAQ hit
	Source   string `json:"source,omitempty"` // category, like a document's source
	Lang     string `json:"lang,omitempty"`   // "zh", "en"; "" when unknown
	// Locator is where the entry is in its file: "id X" when it has an id,
	// else "line N" (JSON lines) or "row N" (CSV, the header being row 1).
	// Empty for entries built in code.
	Locator string `json:"-"`
}

// faqField maps the accepted field and column names of an FAQ file,
// lower-cased, to the FAQEntry field they fill.
var faqField = map[string]string{
	"question": "question", "q": "question", "问题": "question", "提问": "question",
	"answer": "answer", "a": "answer", "答案": "answer", "回答": "answer",
	"id": "id", "编号": "id",
	"source": "source", "category": "source", "来源": "source", "分类": "source",
	"lang": "lang", "language": "lang", "语言": "lang",
}

// isExact reports whether key is the field's own name rather than an alias.
func isExact(key, field string) bool { return strings.ToLower(strings.TrimSpace(key)) == field }

// faqName returns the FAQEntry field a record key or CSV column fills, or "".
func faqName(key string) string { return faqField[strings.ToLower(strings.TrimSpace(key))] }

// ReadFAQ reads the FAQ file name of fsys; see ParseFAQ.
func ReadFAQ(fsys fs.FS, name string) ([]FAQEntry, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return ParseFAQ(name, data)
}

// ParseFAQ parses an FAQ file, choosing the format by the extension of
// name: JSON lines (.jsonl, one object a line) or CSV (.csv, a header row
// then one entry a row). Field and column names are matched without regard
// to case: question (or q, 问题, 提问) and answer (or a, 答案, 回答) are
// required in every entry; id (编号), source (category, 来源, 分类) and
// lang (language, 语言) are optional. Other fields are ignored. An entry
// without a question or an answer, a repeated id or a line that is not a
// JSON object is an error matching ErrMalformed that names the line or
// row; content that is not text matches ErrBinary, and another extension
// ErrUnsupported.
func ParseFAQ(name string, data []byte) ([]FAQEntry, error) {
	ext := strings.ToLower(path.Ext(name))
	if ext != ".jsonl" && ext != ".csv" {
		return nil, fmt.Errorf("%w: %q is not an FAQ format (.jsonl or .csv)", ErrUnsupported, ext)
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	return parseFAQ(ext, normalize(data))
}

func parseFAQ(ext, text string) ([]FAQEntry, error) {
	if ext == ".csv" {
		return parseFAQCSV(text)
	}
	return parseFAQJSONL(text)
}

// isFAQ reports whether a file's content is an FAQ collection: a JSON-lines
// file whose first record has question and answer fields (and no "text"
// field, and Options.JSONL.TextFields is unset), or a CSV file whose
// header has question and answer columns.
func isFAQ(ext, text string, o JSONLOptions) bool {
	var keys []string
	switch ext {
	case ".jsonl":
		if len(o.TextFields) > 0 {
			return false
		}
		for line := range strings.Lines(text) {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil {
				return false
			}
			if _, ok := rec["text"]; ok {
				return false
			}
			keys = slices.Collect(maps.Keys(rec))
			break
		}
	case ".csv":
		r := csv.NewReader(strings.NewReader(text))
		r.FieldsPerRecord = -1
		header, err := r.Read()
		if err != nil {
			return false
		}
		keys = header
	}
	var q, a bool
	for _, k := range keys {
		switch faqName(k) {
		case "question":
			q = true
		case "answer":
			a = true
		}
	}
	return q && a
}

// entryBuilder fills FAQ entries and checks them.
type entryBuilder struct {
	out []FAQEntry
	ids map[string]string // id -> locator of its first use
}

// add checks e (found at loc, "line N" or "row N") and appends it.
func (b *entryBuilder) add(e FAQEntry, loc string) error {
	e.Question, e.Answer = strings.TrimSpace(e.Question), strings.TrimSpace(e.Answer)
	e.ID, e.Source, e.Lang = strings.TrimSpace(e.ID), strings.TrimSpace(e.Source), strings.TrimSpace(e.Lang)
	switch {
	case e.Question == "":
		return fmt.Errorf("%w: %s: FAQ entry without a question (question, q or 问题)", ErrMalformed, loc)
	case e.Answer == "":
		return fmt.Errorf("%w: %s: FAQ entry without an answer (answer, a or 答案)", ErrMalformed, loc)
	}
	e.Locator = loc
	if e.ID != "" {
		if b.ids == nil {
			b.ids = map[string]string{}
		}
		if first, dup := b.ids[e.ID]; dup {
			return fmt.Errorf("%w: %s: FAQ id %q already used on %s", ErrMalformed, loc, e.ID, first)
		}
		b.ids[e.ID] = loc
		e.Locator = "id " + e.ID
	}
	b.out = append(b.out, e)
	return nil
}

// setField fills the field of e named by field with v, unless a field of the
// canonical name already did (exact names win over aliases).
func setField(e *FAQEntry, field, v string, exact bool, filled map[string]bool) {
	if filled[field] && !exact {
		return
	}
	if exact {
		filled[field] = true
	}
	switch field {
	case "question":
		e.Question = v
	case "answer":
		e.Answer = v
	case "id":
		e.ID = v
	case "source":
		e.Source = v
	case "lang":
		e.Lang = v
	}
}

func parseFAQJSONL(text string) ([]FAQEntry, error) {
	var b entryBuilder
	for n, line := range strings.Split(text, "\n") {
		loc := "line " + strconv.Itoa(n+1)
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, loc, err)
		}
		if rec == nil {
			return nil, fmt.Errorf("%w: %s: not a JSON object", ErrMalformed, loc)
		}
		var e FAQEntry
		filled := map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(rec)) {
			if f := faqName(k); f != "" {
				if v := scalar(rec[k]); v != "" {
					setField(&e, f, v, isExact(k, f), filled)
				}
			}
		}
		if err := b.add(e, loc); err != nil {
			return nil, err
		}
	}
	return b.out, nil
}

func parseFAQCSV(text string) ([]FAQEntry, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: csv header: %w", ErrMalformed, err)
	}
	// Exact names first, so that a "question" column wins over a "q" one.
	col := map[string]int{}
	for _, exact := range []bool{true, false} {
		for i, h := range header {
			f := faqName(h)
			if _, taken := col[f]; f != "" && !taken && (!exact || isExact(h, f)) {
				col[f] = i
			}
		}
	}
	if _, ok := col["question"]; !ok {
		return nil, fmt.Errorf("%w: csv header %q has no question column (question, q or 问题)", ErrMalformed, header)
	}
	if _, ok := col["answer"]; !ok {
		return nil, fmt.Errorf("%w: csv header %q has no answer column (answer, a or 答案)", ErrMalformed, header)
	}
	var b entryBuilder
	rows := rows{r: r}
	rows.next(header)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return b.out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: csv: %w", ErrMalformed, err)
		}
		loc := "row " + strconv.Itoa(rows.next(rec))
		cell := func(f string) string {
			if i, ok := col[f]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		e := FAQEntry{ID: cell("id"), Question: cell("question"), Answer: cell("answer"), Source: cell("source"), Lang: cell("lang")}
		if err := b.add(e, loc); err != nil {
			return nil, err
		}
	}
}
