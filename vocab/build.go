package vocab

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
)

// column is the names of one table column that holds names.
type column struct {
	kind  string
	names []string
}

// tableColumns returns the columns of t that hold names: the key column
// (the first, when its values are distinct names that are not all
// numbers), the category columns (short names without digits, at least
// two different), and the columns ingest.InferSchema calls a key or a
// category, when their values are names.
func tableColumns(d ingest.Document, t ingest.Table) []column {
	if len(t.Rows) < 2 {
		return nil
	}
	table := t.Name
	if table == "" {
		table = d.Title
	}
	if table == "" {
		table = strings.TrimSuffix(path.Base(d.Path), path.Ext(d.Path))
	}
	width := len(t.Header)
	for _, r := range t.Rows {
		width = max(width, len(r.Cells))
	}
	// The roles ingest infers (a key, categories) count besides the
	// shape of the values read here.
	schema := ingest.InferSchema(t)
	inferred := func(c int) bool {
		cs := schema.Column(t.Column(c))
		return cs != nil && (cs.Role == ingest.RoleKey || cs.Role == ingest.RoleCategory)
	}
	var out []column
	for c := 0; c < width; c++ {
		var vals []string
		seen := map[string]bool{}
		names, digits, numeric, repeated := true, false, true, false
		limit := maxNameRunes
		if c > 0 {
			limit = maxCategoryRunes
		}
		for _, r := range t.Rows {
			if c >= len(r.Cells) {
				continue
			}
			v := strings.Join(strings.Fields(r.Cells[c]), " ")
			if v == "" {
				continue
			}
			if !isName(v) || utf8.RuneCountInString(v) > limit {
				names = false
				break
			}
			digits = digits || strings.ContainsFunc(v, unicode.IsDigit)
			numeric = numeric && strings.IndexFunc(v, func(r rune) bool { return !unicode.IsDigit(r) && r != '-' && r != '.' }) < 0
			k := foldKey(v)
			if seen[k] {
				repeated = true
				continue
			}
			seen[k] = true
			vals = append(vals, v)
		}
		if !names || len(vals) < 2 || c > 0 && slices.ContainsFunc(vals, isPresence) {
			continue // a yes/no or has/has-not column is an attribute, not a kind
		}
		key := c == 0 && !repeated && !numeric
		category := c > 0 && !digits
		if key || category || inferred(c) && !numeric {
			out = append(out, column{kind: table + "/" + t.Column(c), names: vals})
		}
	}
	return out
}

// polarWords are the answers of a yes/no column (lexicon class polar).
var polarWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range query.Lexicon("polar", "") {
		m[foldKey(w)] = true
	}
	return m
}()

func isPolar(v string) bool { return polarWords[foldKey(v)] }

// negations open a value that says something is absent ("无班车", "no
// pool"; lexicon class negation).
var negations = query.Lexicon("negation", "")

// isPresence reports a value that answers yes or no, or says that
// something is absent: its column tells whether a row has a thing.
func isPresence(v string) bool {
	if isPolar(v) {
		return true
	}
	k := foldKey(v)
	for _, n := range negations {
		n = foldKey(n)
		if isHan([]rune(n)[0]) {
			if strings.HasPrefix(k, n) && len(k) > len(n) {
				return true
			}
		} else if f := strings.Fields(k); len(f) > 1 && f[0] == n {
			return true
		}
	}
	return false
}

// isName reports a cell short enough to be a name: at most maxNameRunes
// runes and maxNameWords words, not a sentence, not a price or a time, and
// at least two runes (a single character would match inside any word: 是,
// 否, A).
func isName(v string) bool {
	if n := utf8.RuneCountInString(v); n < 2 || n > maxNameRunes || len(strings.Fields(v)) > maxNameWords {
		return false
	}
	if strings.ContainsAny(v, "，。,;；:：、()（）") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(v)
	return !unicode.IsDigit(r) && !unicode.Is(unicode.Sc, r)
}

// mergeKinds makes the columns that share a name one kind (the first
// column's) and returns their terms.
func mergeKinds(cols []column) []Term {
	parent := make([]int, len(cols))
	for k := range parent {
		parent[k] = k
	}
	find := func(k int) int {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	owner := map[string]int{}
	for k, c := range cols {
		for _, n := range c.names {
			key := foldKey(n)
			if o, ok := owner[key]; ok {
				a, b := find(o), find(k)
				if a != b {
					parent[max(a, b)] = min(a, b)
				}
				continue
			}
			owner[key] = k
		}
	}
	var out []Term
	for k, c := range cols {
		for _, n := range c.names {
			out = append(out, Term{Name: n, Kind: cols[find(k)].kind})
		}
	}
	return out
}

// headingTopics returns the headings that have siblings (sections under
// one parent) as topics of the parent's kind.
func headingTopics(docs []ingest.Document) []Term {
	var out []Term
	for _, d := range docs {
		children := map[string][]string{}
		var parents []string
		for _, b := range d.Blocks {
			if b.ContentType != "" && b.ContentType != retrieval.ContentText || len(b.Headings) < 2 {
				continue
			}
			for k := 1; k < len(b.Headings); k++ {
				parent := strings.Join(b.Headings[:k], " > ")
				h := strings.TrimSpace(b.Headings[k])
				if !isName(h) {
					continue
				}
				if _, ok := children[parent]; !ok {
					parents = append(parents, parent)
				}
				if !contains(children[parent], h) {
					children[parent] = append(children[parent], h)
				}
			}
		}
		for _, p := range parents {
			if cs := children[p]; len(cs) >= 2 {
				for _, h := range cs {
					out = append(out, Term{Name: h, Kind: "section/" + p, Topic: true})
				}
			}
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// foldRune folds case and full-width forms.
func foldRune(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFEE0
	}
	return unicode.ToLower(r)
}

// foldKey is a name as it is matched: folded, single-spaced.
func foldKey(s string) string {
	return strings.Map(foldRune, strings.Join(strings.Fields(s), " "))
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
