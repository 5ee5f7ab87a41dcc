package ingest_test

import (
	"cmp"
	"context"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/adaptrag/adaptrag/retrieval"
)

// memStore is a map-backed retrieval.Store and retrieval.Lister for
// tests; searches find nothing. It counts its writes.
type memStore struct {
	mu       sync.Mutex
	dim      int
	chunks   map[string]retrieval.Chunk // by ID
	deletes  int
	upserts  int
	replaces int
}

func newMemStore(dim int) *memStore {
	return &memStore{dim: dim, chunks: map[string]retrieval.Chunk{}}
}

func (s *memStore) Upsert(ctx context.Context, cs []retrieval.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upserts++
	return s.upsertLocked(cs)
}

func (s *memStore) upsertLocked(cs []retrieval.Chunk) error {
	for _, c := range cs {
		if c.ID == "" {
			return retrieval.ErrInvalid
		}
		if s.dim > 0 && len(c.Vector) != s.dim {
			return retrieval.ErrDimension
		}
		s.chunks[c.ID] = c
	}
	return nil
}

func (s *memStore) DeleteDocument(ctx context.Context, scope retrieval.Scope, docID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	s.deleteLocked(scope, docID)
	return nil
}

func (s *memStore) deleteLocked(scope retrieval.Scope, docID string) {
	maps.DeleteFunc(s.chunks, func(_ string, c retrieval.Chunk) bool {
		return c.Tenant == scope.Tenant && c.DocID == docID
	})
}

// ReplaceDocument is atomic: the batch is checked before anything changes.
func (s *memStore) ReplaceDocument(ctx context.Context, scope retrieval.Scope, docID string, cs []retrieval.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaces++
	for _, c := range cs {
		if c.ID == "" || c.DocID != docID || c.Tenant != scope.Tenant {
			return retrieval.ErrInvalid
		}
		if s.dim > 0 && len(c.Vector) != s.dim {
			return retrieval.ErrDimension
		}
	}
	s.deleteLocked(scope, docID)
	return s.upsertLocked(cs)
}

// Documents implements retrieval.Lister.
func (s *memStore) Documents(ctx context.Context, scope retrieval.Scope) ([]retrieval.DocInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byDoc := map[string]*retrieval.DocInfo{}
	for _, c := range s.chunks {
		if c.Tenant != scope.Tenant {
			continue
		}
		d := byDoc[c.DocID]
		if d == nil {
			d = &retrieval.DocInfo{DocID: c.DocID, Origin: c.Meta[retrieval.MetaOrigin], Source: c.Source,
				ContentType: c.ContentType, Hash: c.Meta[retrieval.MetaContentHash]}
			byDoc[c.DocID] = d
		}
		d.Chunks++
	}
	var out []retrieval.DocInfo
	for _, d := range byDoc {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b retrieval.DocInfo) int {
		return cmp.Or(strings.Compare(a.Origin, b.Origin), strings.Compare(a.DocID, b.DocID))
	})
	return out, nil
}

func (s *memStore) SearchDense(context.Context, retrieval.Request) ([]retrieval.Hit, error) {
	return nil, nil
}

func (s *memStore) SearchSparse(context.Context, retrieval.Request) ([]retrieval.Hit, error) {
	return nil, nil
}

func (s *memStore) SearchHybrid(context.Context, retrieval.Request) ([]retrieval.Hit, error) {
	return nil, nil
}

func (s *memStore) Dim() int     { return s.dim }
func (s *memStore) Close() error { return nil }

// all returns the stored chunks sorted by ID.
func (s *memStore) all() []retrieval.Chunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.chunks))
	slices.SortFunc(out, func(a, b retrieval.Chunk) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// hashEmbedder derives a deterministic vector from each text's FNV hash and
// records the size of every batch.
type hashEmbedder struct {
	dim     int
	err     error // returned by Embed when set
	mu      sync.Mutex
	batches []int
}

func (e *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.err != nil {
		return nil, e.err
	}
	e.mu.Lock()
	e.batches = append(e.batches, len(texts))
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		x := h.Sum64()
		v := make([]float32, e.dim)
		for j := range v {
			v[j] = float32((x>>(j%64))&0xff) / 255
		}
		out[i] = v
	}
	return out, nil
}

func (e *hashEmbedder) Dim() int { return e.dim }

// blockingEmbedder waits for its context to end.
type blockingEmbedder struct{}

func (blockingEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingEmbedder) Dim() int { return 4 }
