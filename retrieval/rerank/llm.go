package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval"
)

// Defaults of LLMConfig.
const (
	DefaultLLMBatch       = 20
	DefaultLLMMaxChars    = 800
	DefaultLLMConcurrency = 4
	// MaxLLMScore is the top of the 0..MaxLLMScore scale the model is asked
	// to use.
	MaxLLMScore = 10
)

// LLMConfig configures NewLLM. The zero value means the defaults.
type LLMConfig struct {
	// Batch is the number of candidates scored per prompt; zero means
	// DefaultLLMBatch. Larger batches cost fewer prompt tokens per hit but
	// ask more of the model.
	Batch int
	// MaxChars caps each passage (in characters) shown to the model; zero
	// means DefaultLLMMaxChars.
	MaxChars int
	// Concurrency is the number of prompts in flight; zero means
	// DefaultLLMConcurrency.
	Concurrency int
}

// LLM reranks by asking a language model to score the candidates, a batch
// per prompt, as JSON {"scores": [...]} on a 0..MaxLLMScore scale. Scores of
// different batches share the scale, so hits are merged by score; ties keep
// the incoming order.
//
// It records the tokens the model reported: per call through RerankUsage,
// in total through Usage. An answer that does not parse, has the wrong
// number of scores or a score off the scale wraps ErrBadResponse; Safe then
// falls back to the incoming order.
//
// An LLM is safe for concurrent use.
type LLM struct {
	g   llm.Generator
	cfg LLMConfig

	in, out atomic.Int64 // tokens over the reranker's life
	calls   atomic.Int64 // prompts sent
}

// NewLLM returns a reranker that scores through g.
func NewLLM(g llm.Generator, cfg LLMConfig) *LLM {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultLLMBatch
	}
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = DefaultLLMMaxChars
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultLLMConcurrency
	}
	return &LLM{g: g, cfg: cfg}
}

// Name returns "llm".
func (r *LLM) Name() string { return "llm" }

// Usage returns the tokens spent by all calls so far.
func (r *LLM) Usage() llm.Usage {
	return llm.Usage{InputTokens: int(r.in.Load()), OutputTokens: int(r.out.Load())}
}

// Calls returns the number of prompts sent so far.
func (r *LLM) Calls() int { return int(r.calls.Load()) }

// Rerank is RerankUsage without the usage.
func (r *LLM) Rerank(ctx context.Context, query string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, error) {
	out, _, err := r.RerankUsage(ctx, query, hits, topN)
	return out, err
}

// RerankUsage scores the hits and returns the best topN (topN <= 0 means
// all) with the tokens this call spent, also when it fails part-way. No
// hits give nil without a prompt.
func (r *LLM) RerankUsage(ctx context.Context, query string, hits []retrieval.Hit, topN int) ([]retrieval.Hit, llm.Usage, error) {
	if len(hits) == 0 {
		return nil, llm.Usage{}, nil
	}
	if r.g == nil {
		return nil, llm.Usage{}, fmt.Errorf("rerank: llm: nil generator: %w", llm.ErrNotConfigured)
	}
	scores := make([]scoredIdx, len(hits))
	var (
		mu    sync.Mutex
		usage llm.Usage
	)
	grp, gctx := errgroup.WithContext(ctx)
	grp.SetLimit(r.cfg.Concurrency)
	for lo := 0; lo < len(hits); lo += r.cfg.Batch {
		hi := min(lo+r.cfg.Batch, len(hits))
		grp.Go(func() (err error) {
			// A panicking Generator must not take the process down from
			// a goroutine no caller can recover in.
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("%w: generator: %v\n%s", ErrPanic, p, debug.Stack())
				}
			}()
			s, u, err := r.batch(gctx, query, hits[lo:hi])
			mu.Lock()
			usage.InputTokens += u.InputTokens
			usage.OutputTokens += u.OutputTokens
			mu.Unlock()
			if err != nil {
				return fmt.Errorf("candidates %d-%d: %w", lo, hi-1, err)
			}
			for i, v := range s {
				scores[lo+i] = scoredIdx{idx: lo + i, score: v}
			}
			return nil
		})
	}
	if err := grp.Wait(); err != nil {
		// errgroup cancels gctx on the first error; report the caller's
		// own deadline when that is what ended the run.
		if cerr := ctx.Err(); cerr != nil && !isContextErr(err) {
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, usage, fmt.Errorf("rerank: llm: %w", err)
	}
	return order(hits, scores, topN), usage, nil
}

// batch scores one prompt's worth of hits.
func (r *LLM) batch(ctx context.Context, query string, hits []retrieval.Hit) ([]float64, llm.Usage, error) {
	r.calls.Add(1)
	resp, err := r.g.Generate(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: llmSystemPrompt},
			{Role: "user", Content: r.prompt(query, hits)},
		},
		// Each score is a few tokens; the margin covers the braces and a
		// model that adds spaces.
		MaxTokens: 32 + 6*len(hits),
		JSON:      true,
	})
	r.in.Add(int64(resp.Usage.InputTokens))
	r.out.Add(int64(resp.Usage.OutputTokens))
	llm.Charge(ctx, resp.Usage)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !isContextErr(err) {
			err = fmt.Errorf("%w (%v)", cerr, err)
		}
		return nil, resp.Usage, err
	}
	s, err := parseScores(resp.Text, len(hits))
	return s, resp.Usage, err
}

const llmSystemPrompt = `You grade search results. For each numbered passage, rate how well it answers the query on a scale from 0 (unrelated) to 10 (answers it fully). Reply with JSON only, exactly {"scores": [s1, s2, ...]}: one number per passage, in passage order.`

func (r *LLM) prompt(query string, hits []retrieval.Hit) string {
	var b strings.Builder
	b.WriteString("Query: ")
	b.WriteString(oneLine(query))
	b.WriteString("\n\nPassages:\n")
	for i, h := range hits {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, oneLine(truncate(passage(h.Chunk), r.cfg.MaxChars)))
	}
	fmt.Fprintf(&b, "\nReturn {\"scores\": [...]} with exactly %d numbers.", len(hits))
	return b.String()
}

// parseScores reads {"scores": [...]} from a model's answer, tolerating a
// code fence or text around the object.
func parseScores(text string, n int) ([]float64, error) {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return nil, fmt.Errorf("no JSON object in answer %q: %w", short(text), ErrBadResponse)
	}
	var v struct {
		Scores []json.Number `json:"scores"`
	}
	if err := json.Unmarshal([]byte(text[i:j+1]), &v); err != nil {
		return nil, fmt.Errorf("answer %q: %v: %w", short(text), err, ErrBadResponse)
	}
	if len(v.Scores) != n {
		return nil, fmt.Errorf("%d scores for %d passages: %w", len(v.Scores), n, ErrBadResponse)
	}
	out := make([]float64, n)
	for k, num := range v.Scores {
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > MaxLLMScore {
			return nil, fmt.Errorf("score %d is %q, want 0..%d: %w", k+1, num, MaxLLMScore, ErrBadResponse)
		}
		out[k] = f
	}
	return out, nil
}

func isContextErr(err error) bool {
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func short(s string) string {
	return truncate(oneLine(s), 120)
}
