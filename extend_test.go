package adaptrag_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/retrieval"
)

const (
	compoundQuestion = "退货要在几天内发起，电子发票怎么申请？"
	redactedMark     = "[redacted]"
)

// redacting inserts, at the evidence stage, a node that marks every
// passage's text, and counts its runs and the passages it saw.
func redacting(runs, seen *atomic.Int32) func(*adaptrag.Graph) error {
	return func(g *adaptrag.Graph) error {
		g.InsertBefore(adaptrag.NodePassages, "redact", func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			runs.Add(1)
			seen.Add(int32(len(s.Docs)))
			for i := range s.Docs {
				s.Docs[i].Chunk.Text = redactedMark + " " + s.Docs[i].Chunk.Text
			}
			return s, nil
		})
		return nil
	}
}

func allRedacted(t *testing.T, what string, res *adaptrag.Result) {
	t.Helper()
	if len(res.Docs) == 0 {
		t.Fatalf("%s: no passages", what)
	}
	for _, d := range res.Docs {
		if !strings.HasPrefix(d.Text, redactedMark) {
			t.Fatalf("%s: passage %s was not redacted: %.40q", what, d.ID, d.Text)
		}
	}
}

// A node inserted at the evidence stage runs for Search (a single query
// and a compound one) and for a compound Ask, on the final passages.
// (Before, a node inserted before generate never ran for Search.)
func TestEvidenceStageRunsOnEveryPath(t *testing.T) {
	f := newFixture(t)
	var runs, seen atomic.Int32
	f.opts.Graph = redacting(&runs, &seen)
	p := f.pipeline(t)
	ctx := context.Background()

	res, err := p.Search(ctx, adaptrag.SearchRequest{Query: "退货要在几天内发起？"})
	if err != nil {
		t.Fatal(err)
	}
	allRedacted(t, "search", res)
	if !slices.Contains(res.Path, "redact") {
		t.Fatalf("search path %v", res.Path)
	}

	res, err = p.Search(ctx, adaptrag.SearchRequest{Query: compoundQuestion})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Path, adaptrag.NodePart) {
		t.Fatalf("the compound query took no parts: %v", res.Path)
	}
	allRedacted(t, "compound search", res)

	runs.Store(0)
	seen.Store(0)
	res = askWith(t, p, adaptrag.Request{Question: compoundQuestion})
	if len(res.Parts) != 2 {
		t.Fatalf("parts %+v", res.Parts)
	}
	// Once, after the parts are combined, on all their passages.
	if runs.Load() != 1 || int(seen.Load()) != len(res.Docs) {
		t.Fatalf("redact ran %d times on %d passages; the answer used %d", runs.Load(), seen.Load(), len(res.Docs))
	}
	allRedacted(t, "compound ask", res)
}

// A replaced dense node runs for each part of a compound question (before,
// the parts called the built-in search directly).
func TestReplacedDenseRunsForEachPart(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var questions []string
	f.opts.Graph = func(g *adaptrag.Graph) error {
		g.ReplaceNode(adaptrag.NodeDense, func(_ context.Context, s adaptrag.State) (adaptrag.State, error) {
			mu.Lock()
			questions = append(questions, s.Question)
			mu.Unlock()
			s.Docs = nil // this store knows nothing
			return s, nil
		})
		return nil
	}
	p := f.pipeline(t)
	res := askWith(t, p, adaptrag.Request{Question: compoundQuestion})
	if len(res.Parts) != 2 {
		t.Fatalf("parts %+v", res.Parts)
	}
	slices.Sort(questions)
	var want []string
	for _, part := range res.Parts {
		want = append(want, part.Question)
	}
	slices.Sort(want)
	if !slices.Equal(questions, want) {
		t.Fatalf("the replaced dense node ran for %q, want each part %q", questions, want)
	}
	if n := f.docs.dense.Load(); n != 0 {
		t.Fatalf("the built-in dense search still ran %d times", n)
	}
}

// flaky fails the first search of each query text with ErrUnavailable.
type flaky struct {
	fullSearcher
	mu    sync.Mutex
	seen  map[string]bool
	fails atomic.Int32
}

func (f *flaky) first(r retrieval.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen[r.Text] {
		return nil
	}
	f.seen[r.Text] = true
	f.fails.Add(1)
	return fmt.Errorf("flaky store: %w", retrieval.ErrUnavailable)
}

func (f *flaky) SearchDense(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	if err := f.first(r); err != nil {
		return nil, err
	}
	return f.fullSearcher.SearchDense(ctx, r)
}

func (f *flaky) SearchHybrid(ctx context.Context, r retrieval.Request) ([]retrieval.Hit, error) {
	if err := f.first(r); err != nil {
		return nil, err
	}
	return f.fullSearcher.SearchHybrid(ctx, r)
}

// The parts' searches are retried like the single query's: a store that
// is briefly unavailable does not fail a compound question.
func TestPartsRetryUnavailableStore(t *testing.T) {
	f := newFixture(t)
	k, err := sample()
	if err != nil {
		t.Fatal(err)
	}
	docs := &flaky{fullSearcher: k.Docs.(fullSearcher), seen: map[string]bool{}}
	f.deps.Docs = docs
	res := askWith(t, f.pipeline(t), adaptrag.Request{Question: compoundQuestion})
	if len(res.Parts) != 2 || docs.fails.Load() < 2 {
		t.Fatalf("parts %d, failures injected %d", len(res.Parts), docs.fails.Load())
	}
	for _, part := range res.Parts {
		if len(part.Evidence) == 0 {
			t.Errorf("part %d (%s) has no evidence after the retry", part.N, part.Question)
		}
	}
}
