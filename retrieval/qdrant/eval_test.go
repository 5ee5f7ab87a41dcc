package qdrant_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
)

// evalDir returns the shared evaluation data directory, or skips.
func evalDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ADAPTRAG_DATA")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Skipf("evaluation data not found: %v", err)
		}
		// retrieval/qdrant -> checkout root -> ../shared/data
		dir = filepath.Join(wd, "..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "retrieval")); err != nil {
		t.Skipf("evaluation data not present at %s (set ADAPTRAG_DATA): skipping the BM25 evaluation", dir)
	}
	return dir
}

type evalSet struct {
	docs    []retrieval.Chunk
	queries [][2]string                // id, text
	rel     map[string]map[string]bool // query id -> relevant doc ids
}

func loadSet(t *testing.T, dir string) evalSet {
	t.Helper()
	s := evalSet{rel: map[string]map[string]bool{}}
	eachLine := func(name string, fn func([]byte) error) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			if err := fn(sc.Bytes()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	eachLine("corpus.jsonl", func(b []byte) error {
		var d struct{ ID, Title, Text string }
		if err := json.Unmarshal(b, &struct {
			ID    *string `json:"_id"`
			Title *string `json:"title"`
			Text  *string `json:"text"`
		}{&d.ID, &d.Title, &d.Text}); err != nil {
			return err
		}
		// Title and text are indexed together, as in the reference figures.
		s.docs = append(s.docs, retrieval.Chunk{ID: d.ID, DocID: d.ID, Title: d.Title, Text: d.Title + "\n" + d.Text, Vector: []float32{1}})
		return nil
	})
	eachLine("queries.jsonl", func(b []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		s.queries = append(s.queries, [2]string{q.ID, q.Text})
		return nil
	})
	first := true
	eachLine(filepath.Join("qrels", "test.tsv"), func(b []byte) error {
		f := strings.Split(string(b), "\t")
		if first || len(f) < 3 || f[2] == "0" {
			first = false
			return nil
		}
		if s.rel[f[0]] == nil {
			s.rel[f[0]] = map[string]bool{}
		}
		s.rel[f[0]][f[1]] = true
		return nil
	})
	return s
}

// TestEvalBM25 measures the sparse leg on the shared BEIR-layout sets through
// the real client and the fake server, and checks nDCG@10 against the data
// README's reference BM25 (same k1, b and IDF; a slightly different
// analyzer), with a 0.05 margin. Each set is indexed twice: with its measured
// average length and with DefaultAvgDocLen. It takes about ten seconds, so
// it runs only when asked:
//
//	ADAPTRAG_EVAL=1 go test -run EvalBM25 -v ./retrieval/qdrant/
func TestEvalBM25(t *testing.T) {
	if os.Getenv("ADAPTRAG_EVAL") == "" {
		t.Skip("set ADAPTRAG_EVAL=1 to run the BM25 evaluation on the shared data (about 10 s)")
	}
	root := evalDir(t)
	reference := map[string]float64{"xquad_en": .962, "xquad_zh": .966, "faq_en-us": .474, "faq_zh-cn": .626}
	srv := qdranttest.Start(t)
	for _, name := range []string{"xquad_en", "xquad_zh", "faq_en-us", "faq_zh-cn"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, "retrieval", name)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("%s not present", dir)
			}
			set := loadSet(t, dir)
			var total int
			for _, d := range set.docs {
				total += len(analysis.Default().Tokens(d.Text))
			}
			avg := float64(total) / float64(len(set.docs))
			for _, avgLen := range []float64{avg, qdrant.DefaultAvgDocLen} {
				cfg := fakeConfig(srv, fmt.Sprintf("%s_%.0f", strings.ReplaceAll(name, "-", "_"), avgLen), 1)
				cfg.AvgDocLen = avgLen
				st, err := qdrant.Open(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Upsert(context.Background(), set.docs); err != nil {
					t.Fatal(err)
				}
				var r1, r8, mrr, ndcg float64
				var n int
				for _, q := range set.queries {
					rel := set.rel[q[0]]
					if len(rel) == 0 {
						continue
					}
					hits, err := st.SearchSparse(context.Background(), retrieval.Request{Text: q[1], K: 10})
					if err != nil {
						t.Fatal(err)
					}
					n++
					found, dcg := 0, 0.0
					for i, h := range hits {
						if !rel[h.Chunk.ID] {
							continue
						}
						if found == 0 {
							mrr += 1 / float64(i+1)
						}
						if i < 1 {
							r1 += 1 / float64(len(rel))
						}
						if i < 8 {
							r8 += 1 / float64(len(rel))
						}
						found++
						dcg += 1 / math.Log2(float64(i+2))
					}
					ideal := 0.0
					for i := range min(len(rel), 10) {
						ideal += 1 / math.Log2(float64(i+2))
					}
					ndcg += dcg / ideal
				}
				st.Close()
				N := float64(n)
				t.Logf("%s avgdl=%.1f: docs %d queries %d  R@1 %.3f  R@8 %.3f  MRR@10 %.3f  nDCG@10 %.3f (reference nDCG@10 %.3f)",
					name, avgLen, len(set.docs), n, r1/N, r8/N, mrr/N, ndcg/N, reference[name])
				if avgLen == avg && ndcg/N < reference[name]-0.05 {
					t.Errorf("nDCG@10 %.3f is more than 0.05 below the reference BM25's %.3f", ndcg/N, reference[name])
				}
			}
		})
	}
}
