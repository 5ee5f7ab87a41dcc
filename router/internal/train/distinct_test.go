package main

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

// The terse test set (router/testdata/terse.jsonl) must share no query with
// what the model is fitted on, after normalization: the generated examples
// always, the public training pools when they are present.
func TestTerseSetIsNotTrainingData(t *testing.T) {
	test, err := loadTerse(filepath.Join("..", "..", "testdata", "terse.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	dir := os.Getenv("ADAPTRAG_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "data")
	}
	var pool []sample
	for _, name := range []string{"train_en.jsonl", "train_zh.jsonl", "dev_en.jsonl", "dev_zh.jsonl"} {
		ss, err := load(filepath.Join(dir, "router", name), name[len(name)-8:len(name)-6])
		if err != nil {
			t.Logf("%s not checked: %v", name, err)
			continue
		}
		for _, s := range ss {
			seen[feat.Normalize(s.text)] = name
		}
		if strings.HasPrefix(name, "train") {
			pool = append(pool, ss...)
		}
	}
	// What the trainer generates with its default flags.
	for _, s := range generate(testCorpus(t), rand.New(rand.NewPCG(1, 2)), pool, defaultGenKeywords, defaultPoolKeywords) {
		seen[feat.Normalize(s.text)] = "generated examples"
	}
	if ss, err := loadTerse(filepath.Join(dir, "conversation", "terse_dev.jsonl")); err == nil {
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
		if own[n] {
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
