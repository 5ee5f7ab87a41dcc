package query

import (
	"bufio"
	"embed"
	"fmt"
	"strings"
)

// The general-language lexicons (question words, auxiliaries,
// connectives) are data: lexicon/*.tsv, one entry a line as class,
// language and entry separated by tabs; "#" starts a comment.
//
//go:embed lexicon/*.tsv
var lexiconFiles embed.FS

// lexEntry is one line of a lexicon file.
type lexEntry struct{ class, lang, entry string }

// lexicon is every entry of the embedded files, read once at start-up.
// A malformed line is skipped and recorded in lexiconErrs, which a test
// requires to be empty (the files are part of the build).
var lexicon, lexiconErrs = readLexicons()

func readLexicons() ([]lexEntry, []error) {
	var out []lexEntry
	var errs []error
	files, err := lexiconFiles.ReadDir("lexicon")
	if err != nil {
		return nil, []error{err}
	}
	for _, f := range files {
		b, err := lexiconFiles.ReadFile("lexicon/" + f.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		line := 0
		for sc.Scan() {
			line++
			l := strings.TrimSpace(sc.Text())
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			fs := strings.Split(l, "\t")
			if len(fs) != 3 || fs[0] == "" || fs[1] == "" || strings.TrimSpace(fs[2]) == "" {
				errs = append(errs, fmt.Errorf("query: lexicon/%s:%d: want class, language and entry separated by tabs", f.Name(), line))
				continue
			}
			out = append(out, lexEntry{fs[0], fs[1], strings.TrimSpace(fs[2])})
		}
	}
	return out, errs
}

// lexSet returns the entries of a class in a language as a set.
func lexSet(class, lang string) map[string]bool {
	m := map[string]bool{}
	for _, e := range lexicon {
		if e.class == class && e.lang == lang {
			m[e.entry] = true
		}
	}
	return m
}

// lexList returns the entries of a class in a language in file order.
func lexList(class, lang string) []string {
	var out []string
	for _, e := range lexicon {
		if e.class == class && e.lang == lang {
			out = append(out, e.entry)
		}
	}
	return out
}

// Lexicon returns the entries of a class of the general-language lexicons
// (lexicon/*.tsv) in a language, or in every language when lang is "", in
// file order. The slice is the caller's.
func Lexicon(class, lang string) []string {
	var out []string
	for _, e := range lexicon {
		if e.class == class && (lang == "" || e.lang == lang) {
			out = append(out, e.entry)
		}
	}
	return out
}
