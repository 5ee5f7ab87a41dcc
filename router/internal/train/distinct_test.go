package main

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

// The router's own test sets (router/testdata: terse, the authored and
// golden small talk, the enterprise held-out questions) must share no query
// with what the model is fitted on, after normalization: the generated
// examples always, the public training pools when they are present. The
// trainer keeps them out (withoutTexts); this checks it did.
func TestTestSetsAreNotTrainingData(t *testing.T) {
	for _, name := range []string{"terse.jsonl", "talk_authored.jsonl", "talk_golden.jsonl", "enterprise_heldout.jsonl"} {
		t.Run(name, func(t *testing.T) { checkNotTrained(t, name) })
	}
}

func checkNotTrained(t *testing.T, name string) {
	test, err := loadTerse(filepath.Join("..", "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ADAPTRAG_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	var pool []sample
	for _, f := range []string{"train_en.jsonl", "train_zh.jsonl"} {
		ss, err := load(filepath.Join(dir, "router", f), f[6:8])
		if err != nil {
			t.Logf("%s not checked: %v", f, err)
			continue
		}
		pool = append(pool, ss...)
	}
	// What the trainer fits on with its default flags: the pools and the
	// generated examples, less the lines of the test sets.
	tests, err := testTexts(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	training, _ := withoutTexts(append(slices.Clone(pool), generate(testCorpus(t), rand.New(rand.NewPCG(1, 2)), pool, defaultGenKeywords, defaultPoolKeywords)...), tests)
	seen := map[string]string{}
	for _, s := range training {
		seen[feat.Normalize(s.text)] = "the training pool"
	}
	if name == "terse.jsonl" { // terse is also kept apart from the public dev sets
		for _, dev := range []string{"dev_en.jsonl", "dev_zh.jsonl"} {
			if ss, err := load(filepath.Join(dir, "router", dev), dev[4:6]); err == nil {
				for _, s := range ss {
					seen[feat.Normalize(s.text)] = dev
				}
			}
		}
	}
	if ss, err := loadTerse(filepath.Join(dir, "conversation", "terse_dev.jsonl")); err == nil && name == "terse.jsonl" {
		for _, s := range ss {
			seen[feat.Normalize(s)] = "terse_dev.jsonl"
		}
	}
	own := map[string]bool{}
	for _, s := range test {
		n := feat.Normalize(s)
		if src, ok := seen[n]; ok {
			t.Errorf("%q is also in %s", s, src)
		}
		if own[n] && name == "terse.jsonl" {
			t.Errorf("%q is in the terse set twice (after normalization)", s)
		}
		own[n] = true
	}
}

// loadTerse reads the texts of a {"text","label"} file.
func loadTerse(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		out = append(out, r.Text)
	}
	return out, sc.Err()
}
