// Package evaltest is the shared harness of the measurement tests that run
// on the evaluation data (../shared/data beside the checkout): it finds the
// data or skips the test, loads a BEIR set with retrieval/eval, ranks its
// corpus with the project's BM25 index (retrieval/bm25) or by exact dot
// product, and splits the queries into the half a component was tuned on
// and the held-out half. Metrics come from retrieval/eval; this package
// only wires the real implementations together for tests.
package evaltest

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/bm25"
	"github.com/adaptrag/adaptrag/retrieval/eval"
)

// EnvData names the environment variable that overrides the location of the
// evaluation data directory.
const EnvData = "ADAPTRAG_DATA"

// DataDir returns the evaluation data directory: $ADAPTRAG_DATA when set,
// else ../shared/data relative to the root of the module that contains the
// working directory (a test's working directory is its package folder). It
// skips the test, saying why, when the directory or its retrieval/ part is
// absent, so that `go test ./...` passes without the data.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvData)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Skipf("evaluation data not found (%v; set %s): skipping measurement", err, EnvData)
		}
		dir = filepath.Join(root, "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "retrieval")); err != nil {
		t.Skipf("evaluation data not present at %s (set %s): skipping measurement", dir, EnvData)
	}
	return dir
}

// Root returns the evaluation data directory, $ADAPTRAG_DATA when set,
// else ../shared/data relative to the module root (found by walking up from
// the working directory to go.mod). It skips the test, saying where it
// looked, when the directory is absent.
func Root(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvData)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Skipf("evaluation data not found (%v; set %s): skipping", err, EnvData)
		}
		dir = filepath.Join(root, "..", "shared", "data")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("evaluation data not present at %s (set %s): skipping", dir, EnvData)
	}
	return dir
}

// File returns the path of rel (slash-separated) inside the evaluation
// data directory (see Root). It skips the test, naming the file, when the
// directory or the file is absent.
func File(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Root(t), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("evaluation file %s not present (set %s to the data directory): skipping", p, EnvData)
	}
	return p
}

// errNoModule reports a working directory outside any Go module.
var errNoModule = errors.New("no go.mod above the working directory")

// moduleRoot returns the nearest directory at or above the working
// directory that holds a go.mod.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errNoModule
		}
		d = up
	}
}

// Load reads the BEIR set DataDir(t)/retrieval/name with eval.LoadBEIR. It
// skips the test when the data directory is absent (see DataDir) and fails
// it when the set is missing, malformed or has no documents or judged
// queries: once the data is there, a broken set is an error, not a skip.
func Load(t testing.TB, name string) *eval.Dataset {
	t.Helper()
	dir := filepath.Join(DataDir(t), "retrieval", name)
	ds, err := eval.LoadBEIR(dir)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("evaluation set %s missing from %s: %v", name, dir, err)
	}
	if err != nil {
		t.Fatalf("loading evaluation set %s: %v", name, err)
	}
	if len(ds.Corpus) == 0 || len(ds.Queries) == 0 {
		t.Fatalf("evaluation set %s: %d documents, %d judged queries", name, len(ds.Corpus), len(ds.Queries))
	}
	return ds
}

// Halves splits the queries of ds at len/2 into the first half (where
// weights are tuned) and the second (held out). Both share ds's corpus and
// judgements, which must not be modified through them.
func Halves(ds *eval.Dataset) (tune, heldOut *eval.Dataset) {
	half := len(ds.Queries) / 2
	part := func(q []eval.Query) *eval.Dataset {
		return &eval.Dataset{Corpus: ds.Corpus, Queries: slices.Clip(q), Qrels: ds.Qrels}
	}
	return part(ds.Queries[:half]), part(ds.Queries[half:])
}

// Scored is a corpus document, by its index in Dataset.Corpus, with the
// score a ranking gave it.
type Scored struct {
	Doc   int
	Score float64
}

// IDs returns the document ids of ranked, in order.
func IDs(ds *eval.Dataset, ranked []Scored) []string {
	out := make([]string, len(ranked))
	for i, s := range ranked {
		out[i] = ds.Corpus[s.Doc].ID
	}
	return out
}

// BM25 ranks a data set's corpus with a bm25.Index built with the zero
// Params (the project's defaults: analysis.Default, k1 1.2, b 0.75, each
// distinct query term counted once). Document i of the corpus is indexed
// under id i as its title, a space and its text. Searches may run
// concurrently.
type BM25 struct {
	ds *eval.Dataset
	ix *bm25.Index
}

// NewBM25 indexes the corpus of ds.
func NewBM25(ds *eval.Dataset) *BM25 {
	ix := bm25.New(bm25.Params{})
	for i, d := range ds.Corpus {
		ix.Add(uint32(i), d.Title+" "+d.Text)
	}
	return &BM25{ds: ds, ix: ix}
}

// Search returns the k best documents for query, best first, ties by
// ascending corpus index; nil when nothing matches.
func (b *BM25) Search(query string, k int) []Scored {
	hits := b.ix.Search(query, k, nil)
	if len(hits) == 0 {
		return nil
	}
	out := make([]Scored, len(hits))
	for i, h := range hits {
		out[i] = Scored{Doc: int(h.ID), Score: h.Score}
	}
	return out
}

// Rank returns the ids of the k best documents for query, best first.
func (b *BM25) Rank(query string, k int) []string {
	return IDs(b.ds, b.Search(query, k))
}

// EmbedCorpus embeds every document of ds as its title, a newline and its
// text, in one call under t.Context(), and returns the vectors in corpus
// order for Nearest. It fails the test when e fails or returns a vector
// count other than the corpus size.
func EmbedCorpus(t testing.TB, e retrieval.Embedder, ds *eval.Dataset) [][]float32 {
	t.Helper()
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		texts[i] = d.Title + "\n" + d.Text
	}
	vs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatalf("embedding the corpus: %v", err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("embedding the corpus: %d vectors for %d documents", len(vs), len(texts))
	}
	return vs
}

// Nearest returns the k documents whose vectors have the largest dot
// product with q (the cosine for unit vectors), best first, ties by
// ascending index: an exact search, to measure an embedder without an
// approximate index in the way. docs[i] is the vector of corpus document i;
// vectors of different lengths are compared as if the shorter one were
// padded with zeros.
func Nearest(q []float32, docs [][]float32, k int) []Scored {
	if k <= 0 || len(docs) == 0 {
		return nil
	}
	out := make([]Scored, len(docs))
	for i, v := range docs {
		var s float64
		for j := range min(len(q), len(v)) {
			s += float64(q[j]) * float64(v[j])
		}
		out[i] = Scored{Doc: i, Score: s}
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(k, len(out))]
}
