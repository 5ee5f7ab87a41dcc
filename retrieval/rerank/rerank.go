// Package rerank reorders retrieved hits for a query. It offers three
// retrieval.Reranker implementations and a guard:
//
//   - Lexical: an offline reranker that needs no model. It blends the
//     incoming (fused) rank with idf-weighted query-term coverage, term
//     proximity and a title match.
//   - HTTP: a client for cross-encoder rerank servers, in the TEI shape
//     (POST /rerank) or the Cohere/Jina shape (POST /v1/rerank).
//   - LLM: asks a language model, through llm.Generator, for one relevance
//     score per candidate and records the tokens it spent.
//   - Safe runs any reranker and falls back to the incoming order when it
//     fails, times out, panics or answers garbage, reporting why.
package rerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Sentinel errors. Transport failures wrap retrieval.ErrUnavailable, bad
// requests retrieval.ErrInvalid, and timeouts stay a wrapped
// context.DeadlineExceeded.
var (
	// ErrBadResponse reports a reranker answer that cannot be used: an
	// index out of range, a duplicate, a wrong number of scores, a score
	// that is not a finite number, or a body that does not parse.
	ErrBadResponse = errors.New("rerank: malformed reranker response")
	// ErrPanic reports a reranker that panicked; Safe recovers it.
	ErrPanic = errors.New("rerank: reranker panicked")
)

// Method names set on hits.
const (
	MethodRerank = retrieval.MethodRerank // reordered by a reranker
	MethodFused  = retrieval.MethodFused  // incoming order kept after a fallback
)

// Namer is implemented by rerankers that have a short name for logs and
// Outcome.Reranker. Rerankers without it are named by their Go type.
type Namer interface {
	Name() string
}

// Name returns r's name: r.Name() when r implements Namer, else its type.
func Name(r retrieval.Reranker) string {
	if n, ok := r.(Namer); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", r)
}

// Outcome is what Safe returns: the hits to use and, when the reranker
// could not be trusted, why.
type Outcome struct {
	Hits     []retrieval.Hit // best first; at most topN
	Fallback bool            // true when Hits are the incoming order (Method "fused")
	Cause    error           // why the fallback happened; nil otherwise
	Reranker string          // the reranker's name (see Name)
}

// Safe reranks hits with r and checks the answer. When r returns an error
// (a timeout included: ctx carries the deadline, Safe adds none), panics, or
// answers garbage (a hit that was not among the candidates, a duplicate, a
// wrong count, a NaN score), Safe returns the first topN hits in their
// incoming order with Method "fused", Fallback true and Cause set. topN <= 0
// means all hits. No hits give an empty Outcome without calling r. hits is
// never modified.
//
// Cause wraps the reranker's error, so errors.Is(o.Cause,
// context.DeadlineExceeded) tells a timeout apart; a panic gives a Cause
// wrapping ErrPanic with the panic value and stack.
func Safe(ctx context.Context, r retrieval.Reranker, query string, hits []retrieval.Hit, topN int) Outcome {
	if r == nil {
		return fallback(hits, topN, "<nil>", fmt.Errorf("rerank: nil reranker: %w", retrieval.ErrInvalid))
	}
	name := safeName(r)
	if len(hits) == 0 {
		return Outcome{Reranker: name}
	}
	if topN <= 0 || topN > len(hits) {
		topN = len(hits)
	}
	in := hits
	if _, ok := r.(readOnly); !ok {
		// Another reranker may reorder or rewrite the slice it is given.
		in = slices.Clone(hits)
	}
	out, err := call(ctx, r, query, in, topN)
	if err == nil {
		err = validate(hits, out, topN)
	}
	if err != nil {
		return fallback(hits, topN, name, fmt.Errorf("rerank: %s: %w", name, err))
	}
	return Outcome{Hits: out, Reranker: name}
}

// readOnly is implemented by this package's rerankers that never write
// to the hits they are given, so that Safe need not copy them.
type readOnly interface{ readsOnly() }

// safeName is Name, guarded: a Name method can panic too.
func safeName(r retrieval.Reranker) (name string) {
	defer func() {
		if recover() != nil {
			name = fmt.Sprintf("%T", r)
		}
	}()
	return Name(r)
}

// call runs r.Rerank, turning a panic into an error.
func call(ctx context.Context, r retrieval.Reranker, query string, hits []retrieval.Hit, topN int) (out []retrieval.Hit, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%w: %v\n%s", ErrPanic, p, debug.Stack())
		}
	}()
	return r.Rerank(ctx, query, hits, topN)
}

// validate checks that out is a reordering of exactly topN of the
// candidates, each once, with finite scores.
func validate(in, out []retrieval.Hit, topN int) error {
	if len(out) != topN {
		return fmt.Errorf("returned %d hits, want %d: %w", len(out), topN, ErrBadResponse)
	}
	known := make(map[string]bool, len(in))
	for _, h := range in {
		known[h.Chunk.ID] = true
	}
	seen := make(map[string]bool, len(out))
	for i, h := range out {
		switch {
		case !known[h.Chunk.ID]:
			return fmt.Errorf("hit %d (%q) was not a candidate: %w", i, h.Chunk.ID, ErrBadResponse)
		case seen[h.Chunk.ID]:
			return fmt.Errorf("hit %d (%q) returned twice: %w", i, h.Chunk.ID, ErrBadResponse)
		case math.IsNaN(h.Score) || math.IsInf(h.Score, 0):
			return fmt.Errorf("hit %d (%q) has score %v: %w", i, h.Chunk.ID, h.Score, ErrBadResponse)
		}
		seen[h.Chunk.ID] = true
	}
	return nil
}

func fallback(hits []retrieval.Hit, topN int, name string, cause error) Outcome {
	if topN <= 0 || topN > len(hits) {
		topN = len(hits)
	}
	var out []retrieval.Hit
	if topN > 0 {
		out = make([]retrieval.Hit, topN)
		copy(out, hits)
		for i := range out {
			out[i].Method = MethodFused
		}
	}
	return Outcome{Hits: out, Fallback: true, Cause: cause, Reranker: name}
}

// scoredIdx is a candidate index with a score.
type scoredIdx struct {
	idx   int
	score float64
}

// order returns the first topN hits sorted by score (best first, ties kept
// in incoming order), with Method "rerank" and the new scores. It is how
// every reranker of this package builds its answer.
func order(hits []retrieval.Hit, scores []scoredIdx, topN int) []retrieval.Hit {
	slices.SortStableFunc(scores, func(a, b scoredIdx) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	if topN <= 0 || topN > len(scores) {
		topN = len(scores)
	}
	out := make([]retrieval.Hit, topN)
	for i, s := range scores[:topN] {
		out[i] = hits[s.idx]
		out[i].Score = s.score
		out[i].Method = MethodRerank
	}
	return out
}
