// Package retrieval defines the vocabulary shared by every retrieval backend:
// chunks, hits, filters, the caller-owned Scope, and the small interfaces
// (Store, Embedder, Reranker) that the adaptive pipeline's nodes call.
//
// The package is a leaf: it imports nothing of the project. Backends live in
// sub-packages (memstore, qdrant), as do the analyzer, embedders and rerankers.
package retrieval

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors shared by all backends. Backends wrap them with %w so
// callers can match with errors.Is. A timeout is never reported as one of
// these: it stays a wrapped context.DeadlineExceeded, and "no hits" is an
// empty result with a nil error.
var (
	// ErrUnavailable reports that a backend could not be reached (a store
	// that is down, a refused connection).
	ErrUnavailable = errors.New("retrieval: backend unavailable")
	// ErrDimension reports a vector whose length does not match the store's.
	ErrDimension = errors.New("retrieval: vector dimension mismatch")
	// ErrInvalid reports a malformed request or chunk (empty id, k <= 0, ...).
	ErrInvalid = errors.New("retrieval: invalid request")
	// ErrNotFound reports that a named thing (a collection, a document)
	// does not exist. Searching and finding nothing is not ErrNotFound.
	ErrNotFound = errors.New("retrieval: not found")
	// ErrCorrupt reports on-disk data that failed its integrity check.
	ErrCorrupt = errors.New("retrieval: corrupt data")
	// ErrNotPermitted reports a record the caller's actor may not read.
	// A look-up that returns it must not be retried with other wordings.
	ErrNotPermitted = errors.New("retrieval: not permitted")
)

// Well-known metadata keys, usable in a Condition.
const (
	KeySource      = "source"
	KeyDocID       = "doc_id"
	KeyTitle       = "title"
	KeyContentType = "content_type"
)

// Named keys of Chunk.Meta written by ingestion and read by the pipeline.
// Use these constants rather than string literals.
const (
	// MetaOrigin is where the chunk came from, as a user can open it: the
	// file path relative to the ingested folder (slash-separated), or a URL.
	MetaOrigin = "origin"
	// MetaLocator is the place inside the origin: a heading path
	// ("Handbook > Leave"), a CSV row ("row 12") or a record id ("id 42").
	MetaLocator = "locator"
	// MetaQuestion and MetaAnswer hold an FAQ entry's question and standard
	// answer (ContentFAQ chunks).
	MetaQuestion = "question"
	MetaAnswer   = "answer"
	// MetaLang is the language of the chunk's text ("zh", "en"), when known.
	MetaLang = "lang"
	// MetaContentHash is a hash of the whole document the chunk belongs to,
	// so a listing can tell whether a file changed since it was ingested.
	MetaContentHash = "content_hash"
	// MetaIngestedAt is when the document was ingested, RFC 3339 in UTC.
	MetaIngestedAt = "ingested_at"
)

// Content types a chunk can carry.
const (
	ContentText     = "text"
	ContentTableRow = "table_row"
	ContentFAQ      = "faq"
)

// Chunk is one retrievable unit of text with its provenance.
type Chunk struct {
	ID          string            // stable id: re-ingesting the same content yields the same id
	DocID       string            // the document the chunk came from; DeleteDocument removes by it
	Tenant      string            // owner scope; set by the ingesting caller, never by a model
	Source      string            // a category or file the caller can filter on (e.g. "hr", "it")
	Title       string            // document or section title
	ContentType string            // ContentText, ContentTableRow, ContentFAQ
	Position    int               // order of the chunk inside its document
	Text        string            // the text that is embedded, indexed and cited
	Meta        map[string]string // free-form metadata; filterable by key
	Vector      []float32         // dense embedding; required by Upsert on dense-capable stores
}

// Value returns the chunk's value for a filter key: a well-known field or,
// failing that, Meta[key].
func (c *Chunk) Value(key string) string {
	switch key {
	case KeySource:
		return c.Source
	case KeyDocID:
		return c.DocID
	case KeyTitle:
		return c.Title
	case KeyContentType:
		return c.ContentType
	}
	return c.Meta[key]
}

// Method names how a hit was found and so what its Score means.
type Method string

// Methods of a Hit.
const (
	MethodDense  Method = "dense"  // Score is the cosine similarity
	MethodBM25   Method = "bm25"   // Score is the BM25 score
	MethodHybrid Method = "hybrid" // Score is a reciprocal-rank fusion score
	MethodRerank Method = "rerank" // Score is the reranker's score
	MethodFused  Method = "fused"  // the incoming order was kept after a reranker failed
	MethodRRF    Method = "rrf"    // Score is a reciprocal-rank fusion of several searches (variants, collections)
)

// Hit is a chunk returned by a search, with its score under the method that
// produced it. Hits are ordered best first; Vector is not populated.
//
// Score is only comparable between hits of the same Method. Relevance, once
// a Calibrator has set it, is comparable across methods.
type Hit struct {
	Chunk  Chunk
	Score  float64 // cosine for dense, BM25 for sparse, RRF for hybrid, reranker score after rerank
	Method Method
	// Relevance is the estimated probability, in [0, 1], that the chunk is
	// relevant to the query, on one scale whatever the method. Zero until
	// a Calibrator sets it.
	Relevance float64
	// Collection names the collection the hit came from ("docs", "faq"),
	// set by the caller that searched it; stores leave it empty.
	Collection string
}

// Scope is the caller-owned access boundary of a request. Stores apply it as
// a must-filter on every search; it cannot be expressed or removed through
// Filter. It comes from the authenticated caller, never from a model.
type Scope struct {
	Tenant string
}

// Condition matches chunks whose value for Key is one of Values (a single
// value means equality).
type Condition struct {
	Key    string
	Values []string
}

// Filter is a conjunction of conditions.
type Filter struct {
	Must []Condition
}

// Match reports whether c satisfies every condition of f.
func (f Filter) Match(c *Chunk) bool {
	for _, cond := range f.Must {
		v := c.Value(cond.Key)
		ok := false
		for _, want := range cond.Values {
			if v == want {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Request is a search request. Scope is mandatory in spirit: the zero Scope
// means the default tenant "", and only chunks of that tenant match.
type Request struct {
	Scope  Scope
	Filter Filter
	Text   string    // query text for sparse and hybrid search
	Vector []float32 // query embedding for dense and hybrid search
	K      int       // number of hits wanted (> 0)
	// Candidates is how many hits each leg of a hybrid search fetches before
	// fusion; zero means DefaultCandidates.
	Candidates int
	// RRFK is the k of reciprocal-rank fusion; zero means DefaultRRFK.
	RRFK int
	// DenseWeight and SparseWeight weigh the legs of a hybrid search in the
	// fusion (see FuseWeightedRRF); zero means 1. A weak embedder (such as
	// the offline hashing one) should get a lower dense weight so that
	// fusion never drags BM25 down.
	DenseWeight, SparseWeight float64
}

// Defaults for hybrid search.
const (
	DefaultCandidates = 50
	DefaultRRFK       = 60
)

// Searcher is the read side of a collection: what answering questions
// needs. Only dense search is required; a collection that also has lexical
// search implements SparseSearcher, one that fuses both itself implements
// HybridSearcher, and the pipeline finds them by type assertion (see
// SearchHybrid). Implementations are safe for concurrent use.
type Searcher interface {
	// SearchDense returns the K nearest chunks to req.Vector by cosine.
	SearchDense(ctx context.Context, req Request) ([]Hit, error)
	// Dim is the dense dimension the store expects (0 until known).
	Dim() int
}

// SparseSearcher is a collection with lexical (BM25) search.
type SparseSearcher interface {
	// SearchSparse returns the K best BM25 matches for req.Text.
	SearchSparse(ctx context.Context, req Request) ([]Hit, error)
}

// HybridSearcher is a collection that runs and fuses the dense and sparse
// legs of a hybrid search itself (in one round trip, say).
type HybridSearcher interface {
	// SearchHybrid fuses a dense and a sparse leg of req.Candidates each by
	// reciprocal-rank fusion and returns the best K.
	SearchHybrid(ctx context.Context, req Request) ([]Hit, error)
}

// SearchHybrid runs a hybrid search on s: s's own when it is a
// HybridSearcher; otherwise a dense leg of req.Candidates hits and, when s
// is a SparseSearcher and req.Text is set, a sparse leg of as many, fused
// here by weighted reciprocal-rank fusion (FuseWeightedRRF with req.RRFK,
// req.DenseWeight and req.SparseWeight), the best K kept. A dense-only
// collection thus answers with its dense candidates, fused alone.
func SearchHybrid(ctx context.Context, s Searcher, req Request) ([]Hit, error) {
	if h, ok := s.(HybridSearcher); ok {
		return h.SearchHybrid(ctx, req)
	}
	if req.K <= 0 {
		return nil, fmt.Errorf("hybrid search: %w: K = %d", ErrInvalid, req.K)
	}
	leg := req
	leg.K = req.Candidates
	if leg.K <= 0 {
		leg.K = DefaultCandidates
	}
	dense, err := s.SearchDense(ctx, leg)
	if err != nil {
		return nil, fmt.Errorf("hybrid search: dense leg: %w", err)
	}
	var sparse []Hit
	if sp, ok := s.(SparseSearcher); ok && req.Text != "" {
		if sparse, err = sp.SearchSparse(ctx, leg); err != nil {
			return nil, fmt.Errorf("hybrid search: sparse leg: %w", err)
		}
	}
	fused := FuseWeightedRRF(req.RRFK, []float64{req.DenseWeight, req.SparseWeight}, dense, sparse)
	if len(fused) == 0 {
		return nil, nil
	}
	return fused[:min(req.K, len(fused))], nil
}

// Store is a searchable, writable collection of chunks. Implementations are
// safe for concurrent use.
type Store interface {
	Searcher
	// A store indexes what it holds for every kind of search.
	SparseSearcher
	HybridSearcher
	// Upsert inserts or replaces chunks by ID. Upserting the same chunks
	// twice leaves the store unchanged.
	Upsert(ctx context.Context, chunks []Chunk) error
	// DeleteDocument removes every chunk of docID within scope.
	DeleteDocument(ctx context.Context, scope Scope, docID string) error
	// ReplaceDocument replaces every chunk of docID within scope by chunks
	// (which must all carry that DocID and the scope's tenant). Readers see
	// the old version or the new one, never a mix or nothing; after a crash
	// the store holds one of the two. With no chunks it deletes the
	// document. A store that cannot promise atomicity says so in its
	// package documentation.
	ReplaceDocument(ctx context.Context, scope Scope, docID string, chunks []Chunk) error
	// Close releases resources. The store must not be used afterwards.
	Close() error
}

// DocInfo describes one stored document, as a Lister reports it. Origin,
// Hash and IngestedAt come from its chunks' Meta (MetaOrigin,
// MetaContentHash, MetaIngestedAt) and are empty when ingestion set none.
type DocInfo struct {
	DocID       string
	Origin      string
	Source      string
	Title       string
	ContentType string // of its first chunk
	Chunks      int
	Hash        string
	IngestedAt  time.Time
}

// Lister is implemented by stores that can list their documents.
type Lister interface {
	// Documents lists the documents within scope, ordered by Origin then
	// DocID.
	Documents(ctx context.Context, scope Scope) ([]DocInfo, error)
}

// A Calibrator sets each hit's Relevance: the estimated probability, in
// [0, 1], that the chunk is relevant to query. Cosine, BM25, fusion and
// reranker scores live on different scales; Relevance is one scale, so a
// single threshold can drop unrelated passages whatever found them.
type Calibrator interface {
	Calibrate(ctx context.Context, query string, hits []Hit) error
}

// Embedder turns texts into dense vectors, one per text, all of Dim length.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
}

// Reranker reorders hits for a query and returns at most topN of them, best
// first, with Method MethodRerank and Score set to the reranker's score.
type Reranker interface {
	Rerank(ctx context.Context, query string, hits []Hit, topN int) ([]Hit, error)
}

// FusionWeighter is implemented by embedders that know how much their dense
// ranking should weigh against BM25 in a hybrid search.
type FusionWeighter interface {
	FusionWeight() float64
}

// DenseWeightOf returns e's fusion weight when it declares one, else 1.
func DenseWeightOf(e Embedder) float64 {
	if fw, ok := e.(FusionWeighter); ok && fw.FusionWeight() > 0 {
		return fw.FusionWeight()
	}
	return 1
}

// Record is one row of structured data (an order, a product), with its
// provenance.
type Record struct {
	Kind    string            // the table: "order", "product", ...
	ID      string            // its key in the table
	Fields  map[string]string // column -> value
	Origin  string            // the file or table it came from
	Locator string            // where in it, e.g. "row 3"
}

// Kind describes a table a Lookup serves: its name and the words a
// question uses for it ("订单", "order").
type Kind struct {
	Name    string
	Aliases []string
}

// Lookup reads structured records for the caller: the facts a question
// depends on (the product of an order, say) are read exactly, not searched
// for. It applies the caller's authority itself: a record of another tenant
// is ErrNotFound, one the actor may not read ErrNotPermitted. Implementations
// are safe for concurrent use.
type Lookup interface {
	// Kinds lists the tables.
	Kinds() []Kind
	// Get returns the record of kind with id.
	Get(ctx context.Context, scope Scope, actor, kind, id string) (Record, error)
}

// Aggregate is the result of a deterministic query over every record a
// question selects.
type Aggregate struct {
	Query   string   // the query as run, rendered ("sum(refund) over order where product = P-204 and date in 2026-11")
	Op      string   // "sum" or "count"
	Value   float64  // the total, or the count
	Unit    string   // of Value, when known
	Records []Record // the records counted, for citation
	// Rows is the number of records counted, when Records may hold only
	// the first of them (a row limit); 0 means len(Records).
	Rows int
}

// Aggregator is implemented by lookups that can answer totals and counts
// ("all P-204 refunds this month") with a query over every matching record
// they hold, never a sample. It returns an error wrapping
// errors.ErrUnsupported when it cannot map the question to a query.
type Aggregator interface {
	Aggregate(ctx context.Context, scope Scope, actor, question string) (Aggregate, error)
}
