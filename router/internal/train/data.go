package main

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// The trainer's hand-written examples and the vocabulary it generates from
// are data (data/*.tsv, one entry a line, tab-separated), not Go slices: a
// test can check every entry against a knowledge base's words, and new
// examples need no code.
//
//go:embed data/*.tsv
var dataFS embed.FS

// errData is wrapped by every error about a malformed data file.
var errData = errors.New("train: bad data file")

// fixed is one hand-written example of data/examples.tsv.
type fixed struct {
	class, lang, group, text string
}

// template is one line of data/templates.tsv: shape "topic" takes one
// topic, shape "compare" a pair and an aspect.
type template struct {
	class, lang, shape, text string
}

// slotKey names a slot of one language.
type slotKey struct{ slot, lang string }

// corpus is what the data files hold, read once and never written again.
type corpus struct {
	examples  []fixed
	templates []template
	slots     map[slotKey][][]string // pair values have two fields, the others one
	keywords  map[slotKey][]string   // language "any" is listed under both en and zh
}

// loadCorpus reads the data files of fsys (dataFS in the trainer).
func loadCorpus(fsys fs.FS) (*corpus, error) {
	c := &corpus{slots: map[slotKey][][]string{}, keywords: map[slotKey][]string{}}
	err := readTSV(fsys, "data/examples.tsv", 4, 4, func(f []string) error {
		if classIndex(f[0]) < 0 {
			return fmt.Errorf("unknown class %q", f[0])
		}
		c.examples = append(c.examples, fixed{f[0], f[1], f[2], f[3]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readTSV(fsys, "data/templates.tsv", 4, 4, func(f []string) error {
		if classIndex(f[0]) < 0 {
			return fmt.Errorf("unknown class %q", f[0])
		}
		if f[2] != "topic" && f[2] != "compare" {
			return fmt.Errorf("unknown shape %q", f[2])
		}
		c.templates = append(c.templates, template{f[0], f[1], f[2], f[3]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readTSV(fsys, "data/slots.tsv", 3, 4, func(f []string) error {
		if (f[0] == "pair") != (len(f) == 4) {
			return fmt.Errorf("slot %s: %d values", f[0], len(f)-2)
		}
		k := slotKey{f[0], f[1]}
		c.slots[k] = append(c.slots[k], f[2:])
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readTSV(fsys, "data/keywords.tsv", 3, 3, func(f []string) error {
		langs := []string{f[1]}
		if f[1] == "any" {
			langs = []string{"en", "zh"}
		}
		for _, l := range langs {
			k := slotKey{f[0], l}
			c.keywords[k] = append(c.keywords[k], f[2])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, c.complete()
}

// complete reports a slot or template set the generators need that has no
// entry, and an example or template of a language other than en and zh.
func (c *corpus) complete() error {
	for _, e := range c.examples {
		if e.lang != "en" && e.lang != "zh" {
			return fmt.Errorf("%w: example %q: language %q", errData, e.text, e.lang)
		}
	}
	for _, t := range c.templates {
		if t.lang != "en" && t.lang != "zh" {
			return fmt.Errorf("%w: template %q: language %q", errData, t.text, t.lang)
		}
	}
	for _, lang := range []string{"en", "zh"} {
		for _, s := range []string{"topic", "pair", "aspect", "greeting"} {
			if len(c.slots[slotKey{s, lang}]) == 0 {
				return fmt.Errorf("%w: slots.tsv: no %s for %s", errData, s, lang)
			}
		}
		for _, tpl := range [][2]string{{"analytical", "compare"}, {"analytical", "topic"}, {"factual", "topic"}} {
			if len(c.templatesOf(tpl[0], lang, tpl[1])) == 0 {
				return fmt.Errorf("%w: templates.tsv: no %s %s template for %s", errData, tpl[0], tpl[1], lang)
			}
		}
		for _, s := range []string{"noun", "mod", "place", "code-prefix", "standard", "camel-part", "snake-part"} {
			if len(c.keywords[slotKey{s, lang}]) == 0 {
				return fmt.Errorf("%w: keywords.tsv: no %s for %s", errData, s, lang)
			}
		}
	}
	if len(c.keywords[slotKey{"cli-error", "en"}]) == 0 {
		return fmt.Errorf("%w: keywords.tsv: no cli-error", errData)
	}
	return nil
}

// readTSV calls row with the fields of every line of name that is neither
// blank nor a comment, checking that it has from min to max non-empty
// fields.
func readTSV(fsys fs.FS, name string, min, max int, row func([]string) error) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < min || len(f) > max {
			return fmt.Errorf("%w: %s:%d: %d fields, want %d to %d: %q", errData, name, n, len(f), min, max, line)
		}
		for _, x := range f {
			if x == "" || x != strings.TrimSpace(x) {
				return fmt.Errorf("%w: %s:%d: empty or padded field: %q", errData, name, n, line)
			}
		}
		if err := row(f); err != nil {
			return fmt.Errorf("%w: %s:%d: %w", errData, name, n, err)
		}
	}
	return sc.Err()
}

// fixedOf returns the texts of the hand-written examples of class, lang
// and group, in file order.
func (c *corpus) fixedOf(class, lang, group string) []string {
	var out []string
	for _, e := range c.examples {
		if e.class == class && e.lang == lang && e.group == group {
			out = append(out, e.text)
		}
	}
	return out
}

// templatesOf returns the templates of class, lang and shape, in file order.
func (c *corpus) templatesOf(class, lang, shape string) []string {
	var out []string
	for _, t := range c.templates {
		if t.class == class && t.lang == lang && t.shape == shape {
			out = append(out, t.text)
		}
	}
	return out
}

// slot returns the single values of a slot.
func (c *corpus) slot(slot, lang string) []string {
	var out []string
	for _, v := range c.slots[slotKey{slot, lang}] {
		out = append(out, v[0])
	}
	return out
}
