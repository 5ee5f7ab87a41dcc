package workload_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

func TestSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"One. Two? Three! Four", []string{"One.", "Two?", "Three!", "Four"}},
		{"3.5 km long. Yes.", []string{"3.5 km long.", "Yes."}},
		{"第一句。第二句！第三句？", []string{"第一句。", "第二句！", "第三句？"}},
		{"  ", nil},
	} {
		if got := workload.Sentences(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Sentences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLoadCorpus(t *testing.T) {
	const dir = "testdata/corpus"
	small, err := workload.LoadCorpus(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	big, err := workload.LoadCorpus(dir, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Docs) != 10 || len(big.Docs) != 1500 || len(big.Title) != 1500 {
		t.Fatalf("sizes %d, %d (titles %d)", len(small.Docs), len(big.Docs), len(big.Title))
	}
	// The documents come first, as they are; a smaller n is a prefix.
	if !slices.Equal(small.Docs, big.Docs[:10]) {
		t.Error("n=10 is not a prefix of n=1500")
	}
	if big.Unique <= 12 || big.Unique >= 1500 {
		t.Errorf("unique texts %d: want more than the 12 documents, fewer than n", big.Unique)
	}
	seen := map[string]bool{}
	for i, d := range big.Docs {
		if seen[d] {
			t.Fatalf("text %d repeats an earlier one: %q", i, d)
		}
		seen[d] = true
	}
	if again, _ := workload.LoadCorpus(dir, 1500); !slices.Equal(again.Docs, big.Docs) {
		t.Error("two loads differ")
	}
	if len(big.Queries) != 12 || big.Queries[0] != "How many arches does the stone bridge have?" {
		t.Errorf("queries %d, first %q", len(big.Queries), big.Queries[0])
	}
	if _, err := workload.LoadCorpus(dir, 1_000_000); !errors.Is(err, workload.ErrCorpus) {
		t.Errorf("too many texts asked: err = %v, want ErrCorpus", err)
	}
	if _, err := workload.LoadCorpus(t.TempDir(), 10); !errors.Is(err, workload.ErrCorpus) {
		t.Errorf("empty directory: err = %v, want ErrCorpus", err)
	}
}
