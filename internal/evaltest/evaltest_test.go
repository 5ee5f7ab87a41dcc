package evaltest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/internal/evaltest"
	"github.com/adaptrag/adaptrag/retrieval/eval"
)

// writeSet writes a tiny BEIR set named name under dir/retrieval.
func writeSet(t *testing.T, dir, name string) {
	t.Helper()
	set := filepath.Join(dir, "retrieval", name)
	if err := os.MkdirAll(filepath.Join(set, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"corpus.jsonl": `{"_id":"d1","title":"Paris","text":"capital of France"}
{"_id":"d2","title":"Berlin","text":"capital of Germany"}
`,
		"queries.jsonl": `{"_id":"q1","text":"capital of Germany"}
{"_id":"q2","text":"unjudged question"}
`,
		"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td2\t1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(set, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDataDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, dir, "tiny")
	t.Setenv(evaltest.EnvData, dir)
	if got := evaltest.DataDir(t); got != dir {
		t.Errorf("DataDir = %q, want %q", got, dir)
	}
}

func TestDataDirSkipsWhenAbsent(t *testing.T) {
	t.Setenv(evaltest.EnvData, filepath.Join(t.TempDir(), "missing"))
	reached := false
	t.Run("absent", func(t *testing.T) {
		evaltest.DataDir(t)
		reached = true
	})
	if reached {
		t.Error("DataDir returned for a missing directory instead of skipping")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, dir, "tiny")
	t.Setenv(evaltest.EnvData, dir)
	ds := evaltest.Load(t, "tiny")
	if len(ds.Corpus) != 2 {
		t.Errorf("corpus has %d documents, want 2", len(ds.Corpus))
	}
	// q2 has no judgement, so eval.LoadBEIR drops it.
	if len(ds.Queries) != 1 || ds.Queries[0].ID != "q1" {
		t.Errorf("queries = %+v, want only q1", ds.Queries)
	}
}

func TestHalves(t *testing.T) {
	ds := &eval.Dataset{Corpus: []eval.Doc{{ID: "d"}}, Qrels: map[string]map[string]int{}}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ds.Queries = append(ds.Queries, eval.Query{ID: id})
	}
	tune, held := evaltest.Halves(ds)
	ids := func(d *eval.Dataset) (out []string) {
		for _, q := range d.Queries {
			out = append(out, q.ID)
		}
		return out
	}
	if got := ids(tune); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("tune half = %v, want [a b]", got)
	}
	if got := ids(held); !slices.Equal(got, []string{"c", "d", "e"}) {
		t.Errorf("held-out half = %v, want [c d e]", got)
	}
	if len(tune.Corpus) != 1 || len(held.Corpus) != 1 {
		t.Error("halves do not share the corpus")
	}
	// Appending to a half must not overwrite the other's queries.
	_ = append(tune.Queries, eval.Query{ID: "x"})
	if held.Queries[0].ID != "c" {
		t.Error("appending to the tune half overwrote the held-out half")
	}
}

func TestBM25(t *testing.T) {
	ds := &eval.Dataset{Corpus: []eval.Doc{
		{ID: "d0", Title: "Cats", Text: "cats purr and sleep"},
		{ID: "d1", Title: "Dogs", Text: "dogs bark"},
		{ID: "d2", Title: "Birds", Text: "birds sing"},
	}}
	ix := evaltest.NewBM25(ds)
	// "dogs" occurs in the title and the text of d1 only: both are indexed.
	if got := ix.Rank("Dogs", 10); !slices.Equal(got, []string{"d1"}) {
		t.Errorf(`Rank("Dogs") = %v, want [d1]`, got)
	}
	got := ix.Search("birds or cats", 10)
	if len(got) != 2 || got[0].Score < got[1].Score {
		t.Fatalf(`Search("birds or cats") = %+v, want 2 hits best first`, got)
	}
	// Each matches one term twice (title and text) with the same idf, and d2
	// is the shorter document, so it ranks first.
	if got[0].Doc != 2 || got[1].Doc != 0 {
		t.Errorf(`Search("birds or cats") docs = %d, %d, want 2, 0`, got[0].Doc, got[1].Doc)
	}
	if got := ix.Search("fish", 10); got != nil {
		t.Errorf(`Search("fish") = %v, want nil`, got)
	}
}

func TestNearest(t *testing.T) {
	docs := [][]float32{{1, 0}, {0, 1}, {0.6, 0.8}, {0, 1}}
	got := evaltest.Nearest([]float32{0, 1}, docs, 3)
	var order []int
	for _, s := range got {
		order = append(order, s.Doc)
	}
	// Docs 1 and 3 tie at 1 and keep index order; doc 2 scores 0.8.
	if !slices.Equal(order, []int{1, 3, 2}) {
		t.Errorf("Nearest order = %v, want [1 3 2]", order)
	}
	if got := evaltest.Nearest([]float32{1}, docs, 10); len(got) != 4 || got[0].Doc != 0 {
		t.Errorf("Nearest with a short query = %+v, want all 4 docs, doc 0 first", got)
	}
	if got := evaltest.Nearest([]float32{1, 0}, docs, 0); got != nil {
		t.Errorf("Nearest(k=0) = %v, want nil", got)
	}
}

// recorder is an Embedder that keeps the texts it was given and returns
// one-component vectors holding each text's length.
type recorder struct{ got []string }

func (r *recorder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.got = append(r.got, texts...)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s))}
	}
	return out, nil
}

func (r *recorder) Dim() int { return 1 }

func TestEmbedCorpus(t *testing.T) {
	ds := &eval.Dataset{Corpus: []eval.Doc{{ID: "a", Title: "T", Text: "body"}, {ID: "b", Text: "x"}}}
	var e recorder
	vs := evaltest.EmbedCorpus(t, &e, ds)
	if want := []string{"T\nbody", "\nx"}; !slices.Equal(e.got, want) {
		t.Errorf("embedded texts %q, want %q", e.got, want)
	}
	if len(vs) != 2 || vs[0][0] != 6 || vs[1][0] != 2 {
		t.Errorf("vectors = %v, want [[6] [2]] in corpus order", vs)
	}
}
