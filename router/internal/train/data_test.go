package main

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func testCorpus(t testing.TB) *corpus {
	t.Helper()
	c, err := loadCorpus(dataFS)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The shipped data files are complete, and every language has each kind of
// example.
func TestCorpus(t *testing.T) {
	c := testCorpus(t)
	count := map[string]int{}
	for _, e := range c.examples {
		count[e.lang+"/"+e.class+"/"+e.group]++
	}
	t.Logf("fixed examples: %v", count)
	for _, k := range []string{"en/factual/service", "zh/factual/service", "en/analytical/general", "zh/analytical/general",
		"en/factual/first-person", "zh/factual/first-person", "en/chitchat/talk", "zh/chitchat/talk"} {
		if count[k] < 10 {
			t.Errorf("%s: %d examples, want >= 10", k, count[k])
		}
	}
	// A topic template takes one topic, a comparison a pair and an aspect.
	for _, tpl := range c.templates {
		want := []string{"%s"}
		if tpl.shape == "compare" {
			want = []string{"%[1]s", "%[2]s", "%[3]s"}
		}
		for _, w := range want {
			if !strings.Contains(tpl.text, w) {
				t.Errorf("%s template %q lacks %s", tpl.shape, tpl.text, w)
			}
		}
	}
}

// A malformed or incomplete data file is an error, wrapping errData.
func TestLoadCorpusErrors(t *testing.T) {
	good := func() fstest.MapFS {
		m := fstest.MapFS{}
		for _, name := range []string{"examples", "templates", "slots", "keywords"} {
			b, err := dataFS.ReadFile("data/" + name + ".tsv")
			if err != nil {
				t.Fatal(err)
			}
			m["data/"+name+".tsv"] = &fstest.MapFile{Data: b}
		}
		return m
	}
	if _, err := loadCorpus(good()); err != nil {
		t.Fatalf("the shipped files: %v", err)
	}
	for name, edit := range map[string][2]string{
		"unknown class":    {"data/examples.tsv", "small-talk\ten\ttalk\thi\n"},
		"too few fields":   {"data/examples.tsv", "factual\ten\thow long is it\n"},
		"padded field":     {"data/templates.tsv", "factual\ten\ttopic\t how much is %s\n"},
		"unknown shape":    {"data/templates.tsv", "factual\ten\tlist\twhat is %s\n"},
		"pair of one":      {"data/slots.tsv", "pair\ten\tcoffee\n"},
		"other language":   {"data/examples.tsv", "factual\tfr\tservice\tquelle heure\n"},
		"empty field":      {"data/keywords.tsv", "noun\t\tcoffee\n"},
		"topic with two":   {"data/slots.tsv", "topic\ten\tcoffee\ttea\n"},
		"template of fr":   {"data/templates.tsv", "factual\tfr\ttopic\tcombien %s\n"},
		"five fields":      {"data/examples.tsv", "factual\ten\tservice\ta\tb\n"},
		"keyword too many": {"data/keywords.tsv", "noun\ten\tcoffee\ttea\n"},
	} {
		m := good()
		f := m[edit[0]]
		m[edit[0]] = &fstest.MapFile{Data: append(append([]byte{}, f.Data...), edit[1]...)}
		if _, err := loadCorpus(m); !errors.Is(err, errData) {
			t.Errorf("%s: err = %v, want errData", name, err)
		}
	}
	// A slot the generators need, left empty.
	m := good()
	m["data/slots.tsv"] = &fstest.MapFile{Data: []byte("topic\ten\tcoffee\n")}
	if _, err := loadCorpus(m); !errors.Is(err, errData) {
		t.Errorf("incomplete slots: err = %v, want errData", err)
	}
	delete(m, "data/slots.tsv")
	if _, err := loadCorpus(m); err == nil || errors.Is(err, errData) {
		t.Errorf("missing file: err = %v, want a read error", err)
	}
}

// The router's own acceptance sentences (router/offline_test.go) are never
// training data, generated or fixed.
func TestAcceptanceSentencesNotTrained(t *testing.T) {
	c := testCorpus(t)
	acceptance := map[string]bool{}
	for _, s := range []string{"你好，你能做什么？", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异", "你好，顺便问下电子发票多久能开好"} {
		acceptance[feat.Normalize(s)] = true
	}
	for _, s := range generate(c, rand.New(rand.NewPCG(1, 2)), nil, defaultGenKeywords, 0) {
		if acceptance[feat.Normalize(s.text)] {
			t.Errorf("%q is an acceptance sentence of the router", s.text)
		}
	}
}
