package feat

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// The cue and small-talk lists are data (lexicon/*.tsv, one entry a line:
// class, language, entry), so that no word list grows in code and a test
// can check every entry against a knowledge base's vocabulary.
//
//go:embed lexicon/*.tsv
var lexiconFS embed.FS

// LexiconEntry is one line of the router's lexicon.
type LexiconEntry struct {
	Class, Lang, Entry string
}

// Lexicon returns every entry of the router's lexicon files, in file order.
func Lexicon() []LexiconEntry { return lexEntries }

// lexEntries is read once at start-up and never written again.
var lexEntries = mustReadLexicon(lexiconFS)

func mustReadLexicon(fsys fs.FS) []LexiconEntry {
	es, err := readLexicon(fsys)
	if err != nil {
		panic(err) // the files are embedded: a broken one is a build error
	}
	return es
}

func readLexicon(fsys fs.FS) ([]LexiconEntry, error) {
	files, err := fs.Glob(fsys, "lexicon/*.tsv")
	if err != nil {
		return nil, fmt.Errorf("feat: lexicon: %w", err)
	}
	var out []LexiconEntry
	for _, name := range files {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("feat: lexicon: %w", err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
				return nil, fmt.Errorf("feat: lexicon %s:%d: want class, language, entry: %q", name, n, line)
			}
			out = append(out, LexiconEntry{Class: f[0], Lang: f[1], Entry: f[2]})
		}
	}
	return out, nil
}

// lexList returns the entries of class, in file order.
func lexList(class string) []string {
	var out []string
	for _, e := range lexEntries {
		if e.Class == class {
			out = append(out, e.Entry)
		}
	}
	return out
}

// lexSet returns the entries of class as a set.
func lexSet(class string) map[string]bool {
	m := map[string]bool{}
	for _, e := range lexList(class) {
		m[e] = true
	}
	return m
}
