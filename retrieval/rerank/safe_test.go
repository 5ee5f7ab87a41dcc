package rerank_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/rerank"
)

// rerankFunc adapts a function to retrieval.Reranker for tests.
type rerankFunc func(ctx context.Context, q string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error)

func (f rerankFunc) Rerank(ctx context.Context, q string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error) {
	return f(ctx, q, hits, topN)
}

// reversed is a well-behaved reranker: it reverses the candidates.
var reversed = rerankFunc(func(_ context.Context, _ string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error) {
	out := slices.Clone(hits)
	slices.Reverse(out)
	out = out[:min(topN, len(out))]
	for i := range out {
		out[i].Score, out[i].Method = float64(len(out)-i), rerank.MethodRerank
	}
	return out, nil
})

func TestSafeSuccess(t *testing.T) {
	hits := mkHits("a", "b", "c", "d")
	o := rerank.Safe(context.Background(), reversed, "q", hits, 2)
	if o.Fallback || o.Cause != nil {
		t.Fatalf("unexpected fallback: %v", o.Cause)
	}
	if got := ids(o.Hits); !slices.Equal(got, []string{"c3", "c2"}) {
		t.Errorf("hits = %v, want [c3 c2]", got)
	}
	if o.Reranker != "rerank_test.rerankFunc" {
		t.Errorf("Reranker = %q, want the type name", o.Reranker)
	}
	if o := rerank.Safe(context.Background(), rerank.NewLexical(rerank.LexicalConfig{}), "q", hits, 0); o.Reranker != "lexical" || len(o.Hits) != 4 {
		t.Errorf("named reranker, topN 0: %q, %d hits", o.Reranker, len(o.Hits))
	}
}

func TestSafeFallbacks(t *testing.T) {
	errBoom := errors.New("boom")
	cases := []struct {
		name string
		r    retrieval.Reranker
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{name: "error", r: rerankFunc(func(context.Context, string, []retrieval.Hit, int) ([]retrieval.Hit, error) {
			return nil, errBoom
		}), want: errBoom},
		{name: "timeout", r: rerankFunc(func(ctx context.Context, _ string, _ []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}), ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 10*time.Millisecond)
		}, want: context.DeadlineExceeded},
		{name: "panic", r: rerankFunc(func(context.Context, string, []retrieval.Hit, int) ([]retrieval.Hit, error) {
			panic("reranker bug")
		}), want: rerank.ErrPanic},
		{name: "too few", r: rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			return h[:1], nil
		}), want: rerank.ErrBadResponse},
		{name: "too many", r: rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			return h, nil
		}), want: rerank.ErrBadResponse},
		{name: "unknown hit", r: rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			out := slices.Clone(h[:2])
			out[1].Chunk.ID = "invented"
			return out, nil
		}), want: rerank.ErrBadResponse},
		{name: "duplicate", r: rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			return []retrieval.Hit{h[0], h[0]}, nil
		}), want: rerank.ErrBadResponse},
		{name: "NaN score", r: rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
			out := slices.Clone(h[:2])
			out[0].Score = math.NaN()
			return out, nil
		}), want: rerank.ErrBadResponse},
		{name: "nil reranker", r: nil, want: retrieval.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits := mkHits("a", "b", "c")
			orig := slices.Clone(hits)
			ctx, cancel := context.WithCancel(context.Background())
			if c.ctx != nil {
				ctx, cancel = c.ctx()
			}
			defer cancel()
			o := rerank.Safe(ctx, c.r, "q", hits, 2)
			if !o.Fallback || !errors.Is(o.Cause, c.want) {
				t.Fatalf("Fallback = %v, Cause = %v; want a fallback caused by %v", o.Fallback, o.Cause, c.want)
			}
			if got := ids(o.Hits); !slices.Equal(got, []string{"c0", "c1"}) {
				t.Errorf("fallback hits = %v, want the incoming top 2 [c0 c1]", got)
			}
			for i, h := range o.Hits {
				if h.Method != rerank.MethodFused || h.Score != orig[i].Score {
					t.Errorf("fallback hit %d: method %q score %v; want %q and the fused score %v", i, h.Method, h.Score, rerank.MethodFused, orig[i].Score)
				}
			}
			if !sameHits(hits, orig) {
				t.Error("Safe let the input be modified")
			}
		})
	}
}

func TestSafeMutatingReranker(t *testing.T) {
	// A reranker that scribbles over its argument must not corrupt the
	// caller's hits (Safe hands it a copy).
	scribble := rerankFunc(func(_ context.Context, _ string, h []retrieval.Hit, n int) ([]retrieval.Hit, error) {
		for i := range h {
			h[i].Method = "scribbled"
		}
		return nil, errors.New("gave up")
	})
	hits := mkHits("a", "b")
	o := rerank.Safe(context.Background(), scribble, "q", hits, 2)
	if hits[0].Method != "hybrid" || o.Hits[0].Method != rerank.MethodFused {
		t.Errorf("input method %q, fallback method %q", hits[0].Method, o.Hits[0].Method)
	}
}

func TestSafeNoHits(t *testing.T) {
	called := false
	r := rerankFunc(func(context.Context, string, []retrieval.Hit, int) ([]retrieval.Hit, error) {
		called = true
		return nil, nil
	})
	o := rerank.Safe(context.Background(), r, "q", nil, 5)
	if called || o.Fallback || o.Hits != nil || o.Cause != nil {
		t.Errorf("no hits: called=%v outcome=%+v", called, o)
	}
}

func ExampleSafe() {
	hits := []retrieval.Hit{
		{Chunk: retrieval.Chunk{ID: "a"}, Score: 0.033, Method: "hybrid"},
		{Chunk: retrieval.Chunk{ID: "b"}, Score: 0.032, Method: "hybrid"},
		{Chunk: retrieval.Chunk{ID: "c"}, Score: 0.031, Method: "hybrid"},
	}
	// A cross-encoder server that does not answer within the request's
	// budget: Safe keeps the fused order and says why.
	down := rerankFunc(func(ctx context.Context, _ string, _ []retrieval.Hit, _ int) ([]retrieval.Hit, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("cross-encoder: %w", ctx.Err())
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	o := rerank.Safe(ctx, down, "e-invoice delay", hits, 2)
	fmt.Println("fallback:", o.Fallback, "timeout:", errors.Is(o.Cause, context.DeadlineExceeded))
	for _, h := range o.Hits {
		fmt.Println(h.Chunk.ID, h.Method)
	}
	// Output:
	// fallback: true timeout: true
	// a fused
	// b fused
}

func sameHits(a, b []retrieval.Hit) bool {
	return slices.EqualFunc(a, b, func(x, y retrieval.Hit) bool {
		return x.Chunk.ID == y.Chunk.ID && x.Score == y.Score && x.Method == y.Method
	})
}
