// Package vocab builds a knowledge base's own vocabulary: the names it
// uses (plans, stores, models, codes, categories) and the kind each shares
// with its siblings, read from the structure of its documents rather than
// from any list in code.
//
// A table's key column (its first column, when its values are distinct
// short names) gives one kind, and so does each category column (short
// values without digits). Two columns that share a
// value are one kind (a model table's Category and an error table's
// Appliance). Sibling headings (sections under one parent) are topics of
// one kind; they are kept apart from names (Term.Topic) because a heading
// is not a thing a pronoun points at.
//
// A Vocabulary implements query.Vocabulary. It is immutable once built and
// safe for concurrent use. Save and Load keep it beside a knowledge base
// (one file per tenant).
package vocab

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/query"
)

// Term is one name of a vocabulary.
type Term struct {
	Name string `json:"name"`
	// Kind is what it shares with its siblings: "table/column" for table
	// values, "section/parent heading" for sibling headings.
	Kind string `json:"kind"`
	// Topic marks a heading: a subject of the knowledge base, not a thing
	// a reference points at.
	Topic bool `json:"topic,omitempty"`
}

// Vocabulary is a set of terms, matched in texts without case and, for
// Latin names, on word boundaries.
type Vocabulary struct {
	terms []Term
	// index maps a folded name to its term; first maps the first folded
	// rune of a name to the names starting with it, longest first.
	index map[string]int
	first map[rune][]string
}

// Limits of what counts as a name.
const (
	maxNameRunes = 24 // longer cells are descriptions, not names
	maxNameWords = 4
	// maxCategoryRunes bounds the values of a category column: a
	// category is a word or two ("SUV", "Washing machine").
	maxCategoryRunes = 16
)

// New returns the vocabulary of terms; a name given twice keeps its first
// kind, and empty names are dropped.
func New(terms []Term) *Vocabulary {
	v := &Vocabulary{index: map[string]int{}, first: map[rune][]string{}}
	for _, t := range terms {
		t.Name = strings.TrimSpace(t.Name)
		key := foldKey(t.Name)
		if key == "" {
			continue
		}
		if _, dup := v.index[key]; dup {
			continue
		}
		v.index[key] = len(v.terms)
		v.terms = append(v.terms, t)
		r, _ := utf8.DecodeRuneInString(key)
		v.first[r] = append(v.first[r], key)
	}
	for r, ks := range v.first {
		slices.SortFunc(ks, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		v.first[r] = ks
	}
	return v
}

// Terms returns a copy of the terms, in the order they were added.
func (v *Vocabulary) Terms() []Term {
	if v == nil {
		return nil
	}
	return slices.Clone(v.terms)
}

// Len is the number of terms.
func (v *Vocabulary) Len() int {
	if v == nil {
		return 0
	}
	return len(v.terms)
}

// Kind returns the kind of name, "" when the vocabulary does not know it.
func (v *Vocabulary) Kind(name string) string {
	if v == nil {
		return ""
	}
	if k, ok := v.index[foldKey(name)]; ok {
		return v.terms[k].Kind
	}
	return ""
}

// Siblings returns the names of kind, in the order they were added.
func (v *Vocabulary) Siblings(kind string) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, t := range v.terms {
		if t.Kind == kind {
			out = append(out, t.Name)
		}
	}
	return out
}

var _ query.Vocabulary = (*Vocabulary)(nil)

// Names implements query.Vocabulary: the longest name at each position,
// left to right, not overlapping. Topics (headings) are not names.
func (v *Vocabulary) Names(text string) []query.Name {
	if v == nil || len(v.terms) == 0 {
		return nil
	}
	// Fold the text rune by rune, keeping each folded rune's byte offset.
	type fr struct {
		r   rune
		off int
	}
	var rs []fr
	for off, r := range text {
		rs = append(rs, fr{foldRune(r), off})
	}
	var out []query.Name
	for i := 0; i < len(rs); {
		if i > 0 && isWordRune(rs[i-1].r) && isWordRune(rs[i].r) && !isHan(rs[i].r) {
			i++ // inside a Latin word
			continue
		}
		matched := 0
		for _, key := range v.first[rs[i].r] {
			kr := []rune(key)
			if i+len(kr) > len(rs) {
				continue
			}
			ok := true
			for k, r := range kr {
				if rs[i+k].r != r {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			end := i + len(kr)
			last := kr[len(kr)-1]
			if end < len(rs) && !isHan(last) && isWordRune(last) && isWordRune(rs[end].r) && !isHan(rs[end].r) {
				continue // "Flow" in "Flowers"
			}
			t := v.terms[v.index[key]]
			if t.Topic {
				continue
			}
			start := rs[i].off
			stop := len(text)
			if end < len(rs) {
				stop = rs[end].off
			}
			if !caseFits(t.Name, text[start:stop]) {
				continue
			}
			out = append(out, query.Name{Text: text[start:stop], Kind: t.Kind, Start: start, End: stop})
			matched = len(kr)
			break
		}
		if matched > 0 {
			i += matched
		} else {
			i++
		}
	}
	return out
}

// caseFits: a name that is one plain word ("Flow", "Spark") matches only
// with its capital (or as written all in capitals), so that "go with the
// flow" names no plan; names with digits, hyphens, several words or CJK
// characters match without case.
func caseFits(name, got string) bool {
	if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) || isHan(r) }) {
		return true
	}
	n, _ := utf8.DecodeRuneInString(name)
	g, _ := utf8.DecodeRuneInString(got)
	if !unicode.IsUpper(n) {
		return true
	}
	return unicode.IsUpper(g)
}

// FromDocuments builds the vocabulary of loaded documents: names from the
// tables' key and category columns, topics from sibling headings.
func FromDocuments(docs []ingest.Document) *Vocabulary {
	var cols []column
	for _, d := range docs {
		for _, t := range d.Tables {
			cols = append(cols, tableColumns(d, t)...)
		}
	}
	terms := mergeKinds(cols)
	terms = append(terms, headingTopics(docs)...)
	return New(terms)
}

// FromFS loads every supported file of fsys with ingest.Parse and builds
// the vocabulary of the documents. A file that fails to load is skipped
// (ingestion reports it); a cancelled ctx stops the walk.
func FromFS(ctx context.Context, fsys fs.FS) (*Vocabulary, error) {
	var docs []ingest.Document
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() || !ingest.Supported(p) || strings.HasPrefix(path.Base(p), ".") {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil
		}
		doc, err := ingest.Parse(p, data, ingest.Options{})
		if err != nil {
			return nil
		}
		docs = append(docs, doc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	return FromDocuments(docs), nil
}

// Merge returns the vocabulary of v's terms followed by w's (a name in
// both keeps v's kind).
func Merge(v, w *Vocabulary) *Vocabulary {
	return New(append(v.Terms(), w.Terms()...))
}

// File is the name of the vocabulary file of a tenant in a store's folder.
func File(dir, tenant string) string {
	name := "vocab.json"
	if tenant != "" {
		name = "vocab-" + safeName(tenant) + ".json"
	}
	return filepath.Join(dir, name)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, s)
}

// fileFormat is the JSON of a saved vocabulary.
type fileFormat struct {
	Version int    `json:"version"`
	Terms   []Term `json:"terms"`
}

// Write writes v as JSON.
func (v *Vocabulary) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(fileFormat{Version: 1, Terms: v.Terms()})
}

// Read reads a vocabulary written by Write.
func Read(r io.Reader) (*Vocabulary, error) {
	var f fileFormat
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	return New(f.Terms), nil
}

// Save writes v to path atomically (a temporary file renamed over it).
func (v *Vocabulary) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("vocab: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vocab-*")
	if err != nil {
		return fmt.Errorf("vocab: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := v.Write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("vocab: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("vocab: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("vocab: %w", err)
	}
	return nil
}

// Load reads the vocabulary saved at path; a missing file is an empty
// vocabulary (a knowledge base ingested before vocabularies existed).
func Load(path string) (*Vocabulary, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	defer f.Close()
	return Read(f)
}
