// Package embed provides the embedders of the dense retrieval leg: Hashing, an
// offline feature-hashing embedder that needs no model, and Remote, which
// reaches an OpenAI-compatible or Ollama embedding endpoint through
// langchaingo. Both implement retrieval.Embedder.
//
// Helpers check an embedder against a store (Check) and embed large inputs in
// batches with progress reporting (EmbedAll).
package embed

import (
	"context"
	"errors"
	"fmt"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Sentinel errors of this package. Dimension mismatches wrap
// retrieval.ErrDimension instead.
var (
	// ErrNotConfigured reports that no embedding model is configured, so
	// only the offline embedder is available.
	ErrNotConfigured = errors.New("embed: no embedding model configured")
	// ErrBadResponse reports an answer from an embedding server that cannot
	// be used: wrong number of vectors, empty vectors.
	ErrBadResponse = errors.New("embed: malformed embedding response")
)

// DefaultBatchSize is the number of texts sent per request when no batch
// size is configured.
const DefaultBatchSize = 64

// Check reports whether e can fill store: it returns an error wrapping
// retrieval.ErrDimension when both dimensions are known and differ. A
// dimension of 0 on either side means "not known yet" (an empty store, a
// remote embedder before its first call) and passes; the store checks again
// on Upsert.
func Check(e retrieval.Embedder, store retrieval.Store) error {
	if e == nil || store == nil {
		return fmt.Errorf("embed: check: nil embedder or store: %w", retrieval.ErrInvalid)
	}
	ed, sd := e.Dim(), store.Dim()
	if ed != 0 && sd != 0 && ed != sd {
		return fmt.Errorf("embed: embedder produces %d dimensions, store expects %d: %w", ed, sd, retrieval.ErrDimension)
	}
	return nil
}

// EmbedAll embeds texts through e in batches of batch texts (<= 0 means
// DefaultBatchSize), calling progress (if not nil) after each batch with the
// number of texts done and the total. It checks that every batch returns one
// vector per text and that all vectors have the same length (an error
// wrapping retrieval.ErrDimension otherwise). No texts give nil, nil. On
// error nothing is returned: a partial result would be misaligned with texts.
func EmbedAll(ctx context.Context, e retrieval.Embedder, texts []string, batch int, progress func(done, total int)) ([][]float32, error) {
	if e == nil {
		return nil, fmt.Errorf("embed: nil embedder: %w", retrieval.ErrInvalid)
	}
	if len(texts) == 0 {
		return nil, nil
	}
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	out := make([][]float32, 0, len(texts))
	dim := 0
	for lo := 0; lo < len(texts); lo += batch {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: after %d of %d texts: %w", lo, len(texts), err)
		}
		hi := min(lo+batch, len(texts))
		vs, err := e.Embed(ctx, texts[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("embed: texts %d-%d of %d: %w", lo, hi-1, len(texts), err)
		}
		if len(vs) != hi-lo {
			return nil, fmt.Errorf("embed: texts %d-%d: got %d vectors for %d texts: %w", lo, hi-1, len(vs), hi-lo, ErrBadResponse)
		}
		for i, v := range vs {
			if dim == 0 {
				dim = len(v)
			}
			if len(v) == 0 || len(v) != dim {
				return nil, fmt.Errorf("embed: text %d has %d dimensions, want %d: %w", lo+i, len(v), dim, retrieval.ErrDimension)
			}
		}
		out = append(out, vs...)
		if progress != nil {
			progress(hi, len(texts))
		}
	}
	return out, nil
}
