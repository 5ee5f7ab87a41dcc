package embed_test

// A small BEIR harness for the measurement tests: loader, a brute-force BM25
// reference and the metrics. It reads the evaluation data beside the
// checkout (or $ADAPTRAG_DATA) and skips when it is absent.

import (
	"bufio"
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

type beirDoc struct {
	ID, Title, Text string
}

type beirQuery struct {
	ID, Text string
}

type beirSet struct {
	Name    string
	Docs    []beirDoc
	Queries []beirQuery
	Rel     map[string]map[string]bool // query id -> relevant doc ids
}

// dataDir returns the evaluation data directory ($ADAPTRAG_DATA, else
// ../shared/data beside the checkout) or skips the test when it is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ADAPTRAG_DATA")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Skipf("evaluation data not found (%v): skipping measurement", err)
		}
		for d := wd; dir == ""; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, "..", "shared", "data")
			} else if filepath.Dir(d) == d {
				t.Skip("evaluation data not found (no go.mod above the test): skipping measurement")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "retrieval")); err != nil {
		t.Skipf("evaluation data not present at %s (set ADAPTRAG_DATA): skipping measurement", dir)
	}
	return dir
}

func loadBEIR(t testing.TB, name string) *beirSet {
	t.Helper()
	dir := filepath.Join(dataDir(t), "retrieval", name)
	s := &beirSet{Name: name, Rel: map[string]map[string]bool{}}
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(line []byte) {
		var raw struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("%s corpus: %v", name, err)
		}
		s.Docs = append(s.Docs, beirDoc{raw.ID, raw.Title, raw.Text})
	})
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(line []byte) {
		var raw struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("%s queries: %v", name, err)
		}
		s.Queries = append(s.Queries, beirQuery{raw.ID, raw.Text})
	})
	b, err := os.ReadFile(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		t.Fatalf("%s qrels: %v", name, err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 3 || f[2] == "0" {
			continue
		}
		if s.Rel[f[0]] == nil {
			s.Rel[f[0]] = map[string]bool{}
		}
		s.Rel[f[0]][f[1]] = true
	}
	// Keep only judged queries, in file order.
	s.Queries = slices.DeleteFunc(s.Queries, func(q beirQuery) bool { return len(s.Rel[q.ID]) == 0 })
	if len(s.Docs) == 0 || len(s.Queries) == 0 {
		t.Fatalf("%s: empty set", name)
	}
	return s
}

func readJSONL(t testing.TB, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			fn(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
}

// bm25Tokens is the data README's reference analysis: lower-cased \w+ runs,
// CJK characters as unigrams plus bigrams.
func bm25Tokens(s string) []string {
	var out []string
	var word, cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			out = append(out, string(word))
			word = word[:0]
		}
	}
	flushCJK := func() {
		for i := range cjk {
			out = append(out, string(cjk[i]))
			if i+1 < len(cjk) {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// bm25 is a brute-force Okapi BM25 (k1 1.2, b 0.75, Lucene idf) over
// title + text.
type bm25 struct {
	docs  []map[string]float64
	lens  []float64
	avg   float64
	df    map[string]float64
	ids   []string
	total float64
}

func newBM25(docs []beirDoc) *bm25 {
	m := &bm25{df: map[string]float64{}}
	for _, d := range docs {
		tf := map[string]float64{}
		toks := bm25Tokens(d.Title + " " + d.Text)
		for _, tk := range toks {
			tf[tk]++
		}
		for tk := range tf {
			m.df[tk]++
		}
		m.docs = append(m.docs, tf)
		m.lens = append(m.lens, float64(len(toks)))
		m.avg += float64(len(toks))
		m.ids = append(m.ids, d.ID)
	}
	m.total = float64(len(docs))
	m.avg /= m.total
	return m
}

type scored struct {
	Doc   int
	Score float64
}

func (m *bm25) search(q string, k int) []scored {
	const k1, b = 1.2, 0.75
	var out []scored
	qt := bm25Tokens(q)
	for i, tf := range m.docs {
		var s float64
		for _, tk := range qt {
			f := tf[tk]
			if f == 0 {
				continue
			}
			n := m.df[tk]
			idf := math.Log(1 + (m.total-n+0.5)/(n+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*m.lens[i]/m.avg))
		}
		if s > 0 {
			out = append(out, scored{i, s})
		}
	}
	return topK(out, k)
}

func topK(s []scored, k int) []scored {
	slices.SortStableFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	if len(s) > k {
		s = s[:k]
	}
	return s
}

// metrics accumulates nDCG@10 and recall@8 (binary relevance).
type metrics struct {
	n               int
	ndcg10, recall8 float64
}

func (m *metrics) add(ranked []string, rel map[string]bool) {
	m.n++
	var dcg, idcg float64
	found := 0
	for i, id := range ranked {
		if !rel[id] {
			continue
		}
		if i < 10 {
			dcg += 1 / math.Log2(float64(i+2))
		}
		if i < 8 {
			found++
		}
	}
	for i := 0; i < min(len(rel), 10); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	m.ndcg10 += dcg / idcg
	m.recall8 += float64(found) / float64(len(rel))
}

func (m *metrics) NDCG() float64   { return m.ndcg10 / float64(m.n) }
func (m *metrics) Recall() float64 { return m.recall8 / float64(m.n) }
