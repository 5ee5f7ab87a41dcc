// Package eval measures retrievers on BEIR-layout data sets: it loads a
// corpus, its queries and graded relevance judgements (qrels), runs a
// Searcher over every judged query, and reports nDCG@10, recall@k, MRR@10
// and the median latency.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// ErrFormat reports a data set file that does not follow the BEIR layout.
// Errors from LoadBEIR wrap it together with the file and line.
var ErrFormat = errors.New("eval: malformed data set")

// Doc is a corpus document.
type Doc struct{ ID, Title, Text string }

// Query is a test query.
type Query struct{ ID, Text string }

// Dataset is a loaded BEIR data set. Qrels maps a query id to the graded
// relevance of documents (doc id -> grade); a grade > 0 means relevant.
type Dataset struct {
	Corpus  []Doc
	Queries []Query
	Qrels   map[string]map[string]int
}

// LoadBEIR reads dir/corpus.jsonl ({"_id","title","text"} per line),
// dir/queries.jsonl ({"_id","text"}) and dir/qrels/test.tsv (a header line,
// then query-id, corpus-id and score separated by tabs). Only queries with
// at least one relevant (grade > 0) judgement are kept, in file order; the
// qrels of other queries are dropped too. A missing file gives an error
// that matches fs.ErrNotExist, a malformed one ErrFormat.
func LoadBEIR(dir string) (*Dataset, error) {
	ds := &Dataset{Qrels: map[string]map[string]int{}}
	err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New("empty _id")
		}
		ds.Corpus = append(ds.Corpus, Doc{ID: d.ID, Title: d.Title, Text: d.Text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := readQrels(filepath.Join(dir, "qrels", "test.tsv"), ds.Qrels); err != nil {
		return nil, err
	}
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		if q.ID == "" {
			return errors.New("empty _id")
		}
		if hasRelevant(ds.Qrels[q.ID]) {
			ds.Queries = append(ds.Queries, Query{ID: q.ID, Text: q.Text})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(ds.Queries))
	for _, q := range ds.Queries {
		kept[q.ID] = true
	}
	for id := range ds.Qrels {
		if !kept[id] {
			delete(ds.Qrels, id)
		}
	}
	return ds, nil
}

func hasRelevant(rel map[string]int) bool {
	for _, g := range rel {
		if g > 0 {
			return true
		}
	}
	return false
}

// readJSONL calls fn for every non-blank line of the file.
func readJSONL(path string, fn func(line []byte) error) error {
	return readLines(path, func(n int, line []byte) error {
		if len(strings.TrimSpace(string(line))) == 0 {
			return nil
		}
		return fn(line)
	})
}

func readQrels(path string, qrels map[string]map[string]int) error {
	return readLines(path, func(n int, line []byte) error {
		s := strings.TrimRight(string(line), "\r")
		if strings.TrimSpace(s) == "" {
			return nil
		}
		f := strings.Split(s, "\t")
		if len(f) != 3 {
			return fmt.Errorf("want 3 tab-separated fields, got %d", len(f))
		}
		grade, err := strconv.Atoi(strings.TrimSpace(f[2]))
		if err != nil {
			if n == 1 {
				return nil // the header line
			}
			return err
		}
		q, d := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		if qrels[q] == nil {
			qrels[q] = map[string]int{}
		}
		qrels[q][d] = grade
		return nil
	})
}

// readLines calls fn with each line (1-based number, no newline) and wraps
// its errors with ErrFormat, the file and the line number.
func readLines(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20) // corpus lines can be long
	for n := 1; sc.Scan(); n++ {
		if err := fn(n, sc.Bytes()); err != nil {
			return fmt.Errorf("%w: %s:%d: %v", ErrFormat, path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("eval: reading %s: %w", path, err)
	}
	return nil
}

// Searcher returns the ids of the documents it finds for q, best first.
type Searcher func(ctx context.Context, q Query) ([]string, error)

// Report holds the mean metrics of a run over a data set's queries and the
// median search latency in milliseconds.
type Report struct {
	Mode     string  `json:"mode"`
	Queries  int     `json:"queries"`
	NDCG10   float64 `json:"ndcg@10"`
	Recall1  float64 `json:"recall@1"`
	Recall3  float64 `json:"recall@3"`
	Recall8  float64 `json:"recall@8"`
	Recall50 float64 `json:"recall@50"`
	MRR10    float64 `json:"mrr@10"`
	P50ms    float64 `json:"p50_ms"`
}

// Run searches every query of ds, one at a time, and averages the metrics
// over them; mode only labels the report. A search error stops the run and
// is returned wrapped with the query id (a timeout stays a
// context.DeadlineExceeded for errors.Is); an empty result is a miss, not an
// error. Run checks ctx between queries. A nil ds or search is an error
// that matches retrieval.ErrInvalid.
func Run(ctx context.Context, ds *Dataset, mode string, search Searcher) (Report, error) {
	if ds == nil || search == nil {
		return Report{}, fmt.Errorf("eval: %s: nil data set or searcher: %w", mode, retrieval.ErrInvalid)
	}
	r := Report{Mode: mode, Queries: len(ds.Queries)}
	if len(ds.Queries) == 0 {
		return r, nil
	}
	lat := make([]time.Duration, 0, len(ds.Queries))
	for _, q := range ds.Queries {
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("eval: %s: %w", mode, err)
		}
		start := time.Now()
		ids, err := search(ctx, q)
		lat = append(lat, time.Since(start))
		if err != nil {
			return Report{}, fmt.Errorf("eval: %s: query %s: %w", mode, q.ID, err)
		}
		rel := ds.Qrels[q.ID]
		r.NDCG10 += NDCG(ids, rel, 10)
		r.Recall1 += Recall(ids, rel, 1)
		r.Recall3 += Recall(ids, rel, 3)
		r.Recall8 += Recall(ids, rel, 8)
		r.Recall50 += Recall(ids, rel, 50)
		r.MRR10 += MRR(ids, rel, 10)
	}
	n := float64(len(ds.Queries))
	for _, m := range []*float64{&r.NDCG10, &r.Recall1, &r.Recall3, &r.Recall8, &r.Recall50, &r.MRR10} {
		*m /= n
	}
	slices.Sort(lat)
	r.P50ms = float64(median(lat)) / float64(time.Millisecond)
	return r, nil
}

func median(d []time.Duration) time.Duration {
	m := len(d) / 2
	if len(d)%2 == 1 {
		return d[m]
	}
	return (d[m-1] + d[m]) / 2
}

// WriteText writes the report as one aligned header line and one value
// line, metrics with three decimals.
func (r Report) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%-12s %7s %7s %7s %7s %7s %7s %7s %8s\n%-12s %7d %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %8.3f\n",
		"mode", "queries", "ndcg@10", "r@1", "r@3", "r@8", "r@50", "mrr@10", "p50_ms",
		r.Mode, r.Queries, r.NDCG10, r.Recall1, r.Recall3, r.Recall8, r.Recall50, r.MRR10, r.P50ms)
	if err != nil {
		return fmt.Errorf("eval: writing report: %w", err)
	}
	return nil
}
