// Package samplekb bundles a small bilingual (Chinese and English) company
// handbook for the fictional company Starbridge Electronics (星桥电子): the
// knowledge base the examples, the CLI demo and the evaluation run on.
//
// Files live in one folder per source category (admin, after_sales,
// finance, hr, it, legal) so that folder-based ingestion gives every chunk
// its source; faq.jsonl at the root is the FAQ collection, each entry
// naming its own source. All content is invented for this project.
package samplekb

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

//go:embed data
var data embed.FS

// Sources lists the source categories of the knowledge base, which are
// also the names of its top-level folders.
var Sources = []string{"admin", "after_sales", "finance", "hr", "it", "legal"}

// FAQFile is the path of the FAQ collection inside FS.
const FAQFile = "faq.jsonl"

// ErrBadFAQ reports an FAQ entry that is malformed or lacks a field.
var ErrBadFAQ = errors.New("samplekb: bad FAQ entry")

// FS returns the knowledge base as a read-only file system rooted at the
// data folder, so its paths read "finance/报销制度.md". It is safe for
// concurrent use.
func FS() fs.FS {
	sub, err := fs.Sub(data, "data")
	if err != nil { // "data" is a valid, embedded path: cannot happen
		return data
	}
	return sub
}

// FAQEntry is one question of the FAQ collection.
type FAQEntry struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Source   string `json:"source"` // one of Sources
	Lang     string `json:"lang"`   // "zh" or "en"
}

// FAQ returns the entries of the FAQ collection in file order. A malformed
// line yields an error matching ErrBadFAQ that names the line.
func FAQ() ([]FAQEntry, error) { return ReadFAQ(FS(), FAQFile) }

// ReadFAQ reads FAQ entries in this package's JSON-lines format (one
// {"id","question","answer","source","lang"} object a line) from any file
// system, so that other knowledge bases can ship an FAQ the same way.
func ReadFAQ(fsys fs.FS, name string) ([]FAQEntry, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("samplekb: %w", err)
	}
	return parseFAQ(b)
}

// parseFAQ decodes JSON lines of FAQ entries.
func parseFAQ(b []byte) ([]FAQEntry, error) {
	var out []FAQEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e FAQEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadFAQ, n, err)
		}
		if e.ID == "" || e.Question == "" || e.Answer == "" || e.Source == "" {
			return nil, fmt.Errorf("%w: line %d: id, question, answer and source are required", ErrBadFAQ, n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("samplekb: %w", err)
	}
	return out, nil
}
