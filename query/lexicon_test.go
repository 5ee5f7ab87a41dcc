package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/vocab"
)

// goldenLine is one sentence of a lexicon class's golden file: an entry
// used in a sentence of a domain, and how many parts Split must find.
type goldenLine struct {
	Entry, Domain, Sentence string
	Parts                   int
}

func readGolden(t *testing.T, class string) []goldenLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lexicon", class+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func lexiconEntries(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("lexicon", "*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("lexicon files: %v", err)
	}
	var all []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, strings.Split(string(b), "\n")...)
	}
	m := map[string][]string{}
	for _, l := range all {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		m[f[0]] = append(m[f[0]], f[2])
	}
	return m
}

// Every sentence of a class's golden file splits as labelled, and every
// entry the golden file speaks for has three variants from two domains at
// least. Contractions (the entries added for new domains) must all have
// golden sentences.
func TestLexiconGolden(t *testing.T) {
	entries := lexiconEntries(t)
	for _, class := range []string{"wh", "aux", "lead"} {
		gs := readGolden(t, class)
		variants, domains := map[string]int{}, map[string]map[string]bool{}
		for _, g := range gs {
			if parts := query.Split(g.Sentence); len(parts) != g.Parts {
				t.Errorf("%s %q: split into %q, want %d parts", class, g.Sentence, parts, g.Parts)
			}
			variants[g.Entry]++
			if domains[g.Entry] == nil {
				domains[g.Entry] = map[string]bool{}
			}
			domains[g.Entry][g.Domain] = true
		}
		for e, n := range variants {
			if n < 3 || len(domains[e]) < 2 {
				t.Errorf("%s %q: %d golden variants from %d domains, want 3 from 2", class, e, n, len(domains[e]))
			}
		}
		for _, e := range entries[class] {
			if strings.Contains(e, "'") && variants[e] == 0 {
				t.Errorf("%s %q has no golden sentence", class, e)
			}
		}
	}
}

// sampleWords are the words of the bundled sample handbook's domain that
// once sat in code, and the names of its own tables.
func sampleWords(t *testing.T) []string {
	words := []string{"报销", "年假", "调休", "差旅", "VPN", "laptop", "reimburse"}
	v, err := vocab.FromFS(context.Background(), samplekb.FS())
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range v.Terms() {
		if !term.Topic {
			words = append(words, term.Name)
		}
	}
	return words
}

// No lexicon entry and no string literal of the package's code, of package
// vocab or of the conversation evaluation names the sample's vocabulary:
// its names (read from samplekb's data) and the handbook words that once
// sat in code. Latin words match whole, Chinese ones anywhere.
func TestNoSampleWordsInLexicons(t *testing.T) {
	words := sampleWords(t)
	match := func(s, w string) bool {
		s, w = strings.ToLower(s), strings.ToLower(w)
		if strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxLatin1 }) >= 0 {
			return strings.Contains(s, w)
		}
		for k := 0; ; {
			i := strings.Index(s[k:], w)
			if i < 0 {
				return false
			}
			i += k
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[i+len(w):])
			if !isWordRune(before) && !isWordRune(after) {
				return true
			}
			k = i + 1
		}
	}
	for class, es := range lexiconEntries(t) {
		for _, e := range es {
			for _, w := range words {
				if match(e, w) {
					t.Errorf("lexicon class %s: %q holds the sample's word %q", class, e, w)
				}
			}
		}
	}
	var files []string
	for _, pat := range []string{"*.go", filepath.Join("..", "vocab", "*.go"), filepath.Join("..", "cmd", "adaptrag", "evalconv.go")} {
		fs, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Go files", len(files))
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		for _, lit := range stringLiterals(t, file) {
			for _, w := range words {
				if match(lit, w) {
					t.Errorf("%s: string %.60q holds the sample's word %q", file, lit, w)
				}
			}
		}
	}
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func stringLiterals(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// Every place demonstrative has golden follow-ups from two domains that
// resolve to the place the history named.
func TestPlaceRefGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "lexicon", "placeref.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v := names{"前门酒店": "hotel", "鼓浪屿酒店": "hotel", "西溪酒店": "hotel", "陆家嘴酒店": "hotel",
		"静安寺店": "store", "徐家汇店": "store", "浦东机场店": "store", "虹桥机场店": "store"}
	variants, domains := map[string]int{}, map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g struct{ Entry, Domain, History, Question, Want string }
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		r, err := query.Offline{Vocab: v}.Rewrite(context.Background(), g.Question, []query.Message{{Role: "user", Content: g.History}})
		if err != nil || !strings.Contains(r.Text, g.Want) || r.Rule != query.RuleReference {
			t.Errorf("%q after %q: %q [%s], want %q resolved", g.Question, g.History, r.Text, r.Rule, g.Want)
		}
		variants[g.Entry]++
		if domains[g.Entry] == nil {
			domains[g.Entry] = map[string]bool{}
		}
		domains[g.Entry][g.Domain] = true
	}
	for _, e := range []string{"那里", "那儿", "那边"} {
		if variants[e] < 3 || len(domains[e]) < 2 {
			t.Errorf("%s: %d variants from %d domains", e, variants[e], len(domains[e]))
		}
	}
	// Without a vocabulary name in the history they are no references.
	r, _ := query.Offline{Vocab: v}.Rewrite(context.Background(), "那里有停车场吗？", []query.Message{{Role: "user", Content: "P-204 的保修期多久？"}})
	if r.Rule == query.RuleReference {
		t.Errorf("resolved without a named place: %q", r.Text)
	}
}

// Every predicate verb has golden follow-ups from two domains or more whose
// elided subject is replaced and whose verb is kept.
func TestPredicateGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "lexicon", "predicate.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	variants, domains := map[string]int{}, map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g struct{ Entry, Domain, History, Question, Want string }
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		r, err := query.Offline{}.Rewrite(context.Background(), g.Question, []query.Message{{Role: "user", Content: g.History}})
		if err != nil || r.Text != g.Want {
			t.Errorf("%q after %q: %q [%s], want %q", g.Question, g.History, r.Text, r.Rule, g.Want)
		}
		variants[g.Entry]++
		if domains[g.Entry] == nil {
			domains[g.Entry] = map[string]bool{}
		}
		domains[g.Entry][g.Domain] = true
	}
	for _, e := range lexiconEntries(t)["predicate"] {
		if variants[e] < 3 || len(domains[e]) < 2 {
			t.Errorf("predicate %s: %d golden variants from %d domains, want 3 from 2", e, variants[e], len(domains[e]))
		}
	}
}
