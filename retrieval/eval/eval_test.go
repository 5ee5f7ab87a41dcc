package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

func TestLoadBEIR(t *testing.T) {
	ds, err := LoadBEIR("testdata/tiny")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Corpus) != 3 || ds.Corpus[2] != (Doc{ID: "d3", Title: "VPN", Text: "Install the VPN client before travelling."}) {
		t.Fatalf("corpus: %+v", ds.Corpus)
	}
	// q3 has no judgements and q4 only a non-relevant one: both dropped.
	if len(ds.Queries) != 2 || ds.Queries[0].ID != "q1" || ds.Queries[1] != (Query{ID: "q2", Text: "when is the help desk open"}) {
		t.Fatalf("queries: %+v", ds.Queries)
	}
	if len(ds.Qrels) != 2 || ds.Qrels["q2"]["d2"] != 2 || ds.Qrels["q2"]["d3"] != 1 || ds.Qrels["q4"] != nil {
		t.Fatalf("qrels: %v", ds.Qrels)
	}
}

func TestLoadBEIRErrors(t *testing.T) {
	if _, err := LoadBEIR(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing files: %v, want fs.ErrNotExist", err)
	}
	for name, files := range map[string]map[string]string{
		"bad json":        {"corpus.jsonl": "{\"_id\": \"d1\"\n"},
		"empty id":        {"corpus.jsonl": "{\"title\": \"x\"}\n"},
		"bad qrels arity": {"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\n"},
		"bad grade":       {"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\thigh\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(rel, s string) {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("corpus.jsonl", `{"_id": "d1", "title": "t", "text": "x"}`+"\n")
			write("queries.jsonl", `{"_id": "q1", "text": "x"}`+"\n")
			write("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
			for rel, s := range files {
				write(rel, s)
			}
			_, err := LoadBEIR(dir)
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("got %v, want ErrFormat", err)
			}
		})
	}
}

func TestRun(t *testing.T) {
	ds, err := LoadBEIR("testdata/tiny")
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string][]string{
		"q1": {"d2", "d1"}, // relevant at rank 2
		"q2": {"d2", "d3"}, // ideal
	}
	var calls []string
	r, err := Run(context.Background(), ds, "fake", func(_ context.Context, q Query) ([]string, error) {
		calls = append(calls, q.ID)
		return answers[q.ID], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "q1,q2" {
		t.Fatalf("searched %v", calls)
	}
	// q1: nDCG = (1/log2 3)/1 = 0.6309..., q2: 1. R@1: 0 and 1/2. R@3: 1 and 1.
	// MRR@10: 1/2 and 1.
	want := Report{Mode: "fake", Queries: 2, NDCG10: (1/math.Log2(3) + 1) / 2, Recall1: 0.25, Recall3: 1, Recall8: 1, Recall50: 1, MRR10: 0.75}
	r.P50ms = 0
	if !near(r.NDCG10, want.NDCG10) {
		t.Fatalf("nDCG %v, want %v", r.NDCG10, want.NDCG10)
	}
	r.NDCG10 = want.NDCG10
	if r != want {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
}

func TestRunErrors(t *testing.T) {
	ds, err := LoadBEIR("testdata/tiny")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), ds, "slow", func(ctx context.Context, q Query) ([]string, error) {
		return nil, context.DeadlineExceeded
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "q1") {
		t.Fatalf("got %v, want a wrapped DeadlineExceeded naming q1", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, ds, "x", func(context.Context, Query) ([]string, error) {
		t.Fatal("searched after cancel")
		return nil, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if _, err := Run(context.Background(), ds, "nil", nil); !errors.Is(err, retrieval.ErrInvalid) {
		t.Fatalf("nil searcher: %v, want retrieval.ErrInvalid", err)
	}
	// No results is a miss, not an error.
	r, err := Run(context.Background(), ds, "none", func(context.Context, Query) ([]string, error) { return nil, nil })
	if err != nil || r.Queries != 2 || r.NDCG10 != 0 || r.Recall50 != 0 {
		t.Fatalf("got %+v, %v", r, err)
	}
}

func TestReportFormats(t *testing.T) {
	r := Report{Mode: "bm25", Queries: 7, NDCG10: 0.5, Recall1: 0.25, Recall3: 0.5, Recall8: 0.75, Recall50: 1, MRR10: 0.6, P50ms: 1.5}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"mode":"bm25","queries":7,"ndcg@10":0.5,"recall@1":0.25,"recall@3":0.5,"recall@8":0.75,"recall@50":1,"mrr@10":0.6,"p50_ms":1.5}`
	if string(b) != want {
		t.Fatalf("json\n got %s\nwant %s", b, want)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Fields(lines[0])[2] != "ndcg@10" || strings.Join(strings.Fields(lines[1]), " ") != "bm25 7 0.500 0.250 0.500 0.750 1.000 0.600 1.500" {
		t.Fatalf("text:\n%s", buf.String())
	}
	if err := r.WriteText(failWriter{}); err == nil {
		t.Fatal("write error not returned")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
