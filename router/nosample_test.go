package router_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/adaptrag/adaptrag/router"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/vocab"
)

// closedClasses are the router lexicon's grammar classes (function words,
// question words, pronouns, joiners): no knowledge base owns them, so a
// heading's "how" or "and" is no word of its domain.
var closedClasses = map[string]bool{"function": true, "q": true, "aux": true, "rel": true, "clause": true,
	"contracted": true, "you": true, "me": true, "filler": true, "opener": true}

// sampleDomain is the bundled sample's own vocabulary, read from its data:
// the names, kinds and headings its vocabulary finds, and the names of its
// files. Latin words of four letters or more (five in file names, three
// in an acronym), whole names, and the Han
// character pairs (without a function character) of its headings, table
// and column names and file names.
type sampleDomain struct {
	latin map[string]bool
	han   map[string]bool
}

func readSampleDomain(t *testing.T) sampleDomain {
	t.Helper()
	closed, hanFunc := map[string]bool{}, map[rune]bool{}
	for _, e := range router.LexiconEntries() {
		if !closedClasses[e.Class] {
			continue
		}
		closed[strings.ToLower(e.Entry)] = true
		if rs := []rune(e.Entry); len(rs) == 1 && rs[0] >= 0x80 {
			hanFunc[rs[0]] = true
		}
	}
	d := sampleDomain{latin: map[string]bool{}, han: map[string]bool{}}
	add := func(text string, hanPairs bool, minLatin int) {
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
			rs := []rune(w)
			if rs[0] < 0x80 {
				// an acronym counts from three letters (VPN)
				if lw := strings.ToLower(w); (len(rs) >= minLatin || len(rs) >= 3 && strings.ToUpper(w) == w) && !closed[lw] {
					d.latin[lw] = true
				}
				continue
			}
			for i := 0; hanPairs && i+1 < len(rs); i++ {
				if unicode.Is(unicode.Han, rs[i]) && unicode.Is(unicode.Han, rs[i+1]) && !hanFunc[rs[i]] && !hanFunc[rs[i+1]] {
					d.han[string(rs[i:i+2])] = true
				}
			}
		}
	}
	v, err := vocab.FromFS(context.Background(), samplekb.FS())
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range v.Terms() {
		// A name's characters are a value's ("多功能厅"), not the domain's
		// words; its Latin words and whole Han name count.
		add(term.Name, term.Topic, 4)
		d.han[strings.ToLower(term.Name)] = true
		add(strings.TrimPrefix(term.Kind, "section/"), true, 4)
	}
	err = fs.WalkDir(samplekb.FS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && p != "data" { // the root, no name of the sample's
			add(strings.TrimSuffix(path.Base(p), path.Ext(p)), true, 5)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.latin) < 20 || len(d.han) < 20 {
		t.Fatalf("the sample's vocabulary is too small to check against: %d Latin words, %d Han pairs", len(d.latin), len(d.han))
	}
	return d
}

// find returns the sample's words in text.
func (d sampleDomain) find(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		rs := []rune(w)
		if rs[0] < 0x80 {
			if d.latin[w] {
				out = append(out, w)
			}
			continue
		}
		for i := 0; i+1 < len(rs); i++ {
			if d.han[string(rs[i:i+2])] {
				out = append(out, string(rs[i:i+2]))
			}
		}
	}
	for n := range d.han {
		if len([]rune(n)) > 2 && strings.Contains(strings.ToLower(text), n) {
			out = append(out, n)
		}
	}
	return out
}

// No entry of the router's lexicon, no line of the trainer's data (its
// examples, templates and keyword vocabulary) and no string in the router's
// Go code (the classifier, its features and the trainer) holds a word of
// the bundled sample's domain: the router knows language, not a knowledge
// base.
func TestNoSampleWords(t *testing.T) {
	d := readSampleDomain(t)
	for _, e := range router.LexiconEntries() {
		if closedClasses[e.Class] {
			continue
		}
		if ws := d.find(e.Entry); len(ws) > 0 {
			t.Errorf("lexicon class %s entry %q holds the sample's words %q", e.Class, e.Entry, ws)
		}
	}
	err := filepath.WalkDir(".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(p), "internal/train/data/") && strings.HasSuffix(p, ".tsv") {
			trainerData(t, d, p)
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil {
					if ws := d.find(s); len(ws) > 0 {
						t.Errorf("%s: string %q holds the sample's words %q", p, s, ws)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// trainerData reports every line of the trainer's data file p (its
// examples, templates and vocabulary; comments apart) that holds the
// sample's words.
func trainerData(t *testing.T, d sampleDomain, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		if ws := d.find(line); len(ws) > 0 {
			t.Errorf("%s:%d: %q holds the sample's words %q", p, i+1, line, ws)
		}
	}
	if n == 0 {
		t.Errorf("%s: no entry checked", p)
	}
}

// The check finds the sample's words where they are.
func TestSampleDomainFinds(t *testing.T) {
	d := readSampleDomain(t)
	for _, s := range []string{"报销", "年假", "VPN", "laptop"} {
		if len(d.find(s)) == 0 {
			t.Errorf("%q is not found as the sample's word", s)
		}
	}
	if ws := d.find("how are you"); len(ws) > 0 {
		t.Errorf("general words found as the sample's: %q", ws)
	}
}
