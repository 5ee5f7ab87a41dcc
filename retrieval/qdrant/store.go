// Package qdrant is a retrieval.Store backed by a Qdrant collection, spoken
// to over gRPC with the official go-client.
//
// One collection holds one knowledge base. Each chunk is a point with a
// named dense vector "dense" (cosine) and a named sparse vector "bm25" whose
// values are BM25 document weights computed client-side with the project's
// analyzer; the collection applies IDF to it at query time (Modifier_Idf),
// which together gives BM25 scores. Hybrid search is one Query call: a dense
// and a sparse prefetch fused by Qdrant's reciprocal-rank fusion.
//
// The caller's Scope is always a must condition on the tenant payload field
// of every search, delete and listing; Filter conditions are added to it
// and cannot remove it.
//
// # Atomicity
//
// Qdrant applies each call on its own and offers no transaction across
// calls. Upsert of more than Config.BatchSize chunks is several calls, and
// ReplaceDocument is an upsert followed by a delete: during a replacement a
// reader can briefly see the old and the new chunks of a document side by
// side (never the document missing), and a crash between the calls leaves
// both until the document is ingested again. See ReplaceDocument.
//
// # Scale
//
// A collection the store creates has keyword payload indexes on tenant
// (marked is_tenant, so that Qdrant stores each tenant's points together
// and plans tenant-filtered searches by it), source, doc_id and
// content_type, and the sharding, replication, on-disk, HNSW and
// quantization settings of Config. Every call is retried on transient
// gRPC codes with exponential backoff and full jitter (Config.Retries);
// all of them are idempotent, so a retry never duplicates anything.
// docs/scale.md is the capacity plan.
//
// Errors wrap the retrieval sentinels: an unreachable server is
// retrieval.ErrUnavailable, a missing collection retrieval.ErrNotFound, a
// vector of the wrong size retrieval.ErrDimension (checked before any call),
// and a request that ran out of time keeps context.DeadlineExceeded in its
// chain. A search that finds nothing returns nil, nil.
package qdrant

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	qc "github.com/qdrant/go-client/qdrant"
)

// Store is a retrieval.Store on one Qdrant collection. It is safe for
// concurrent use.
type Store struct {
	client *qc.Client
	owns   bool // Close closes client
	cfg    Config
	dim    int

	closeOnce sync.Once
	closeErr  error
}

var (
	_ retrieval.Store  = (*Store)(nil)
	_ retrieval.Lister = (*Store)(nil)
)

// Open connects to Qdrant and returns a store on cfg.Collection, creating
// the collection (vectors, the collection settings of cfg, and keyword
// payload indexes on tenant with is_tenant, source, doc_id and
// content_type) when it is missing. An existing collection must
// have the "dense" and "bm25" vectors; its dense size becomes Dim. The
// connection is lazy, so an unreachable server is reported by the first call
// Open makes, wrapped as retrieval.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	host := cfg.Host
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		// The go-client joins host and port with a bare colon.
		host = "[" + host + "]"
	}
	client, err := qc.NewClient(&qc.Config{
		Host:   host,
		Port:   cfg.Port,
		APIKey: cfg.APIKey,
		UseTLS: cfg.UseTLS,
		// The check blocks up to a minute on a server that is down, and
		// only logs: the store's first call reports that better.
		SkipCompatibilityCheck: true,
		PoolSize:               cfg.PoolSize,
		GrpcOptions:            cfg.DialOptions,
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: connect %s: %w: %w", cfg, retrieval.ErrInvalid, err)
	}
	s, err := newStore(ctx, client, cfg)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s.owns = true
	return s, nil
}

// NewWithClient returns a store that uses an existing client, for callers
// that share one connection among several collections. Host, Port, APIKey,
// UseTLS, PoolSize and DialOptions of cfg are ignored, and Close does not
// close c. The collection is created if missing, as by Open.
func NewWithClient(ctx context.Context, c *qc.Client, cfg Config) (*Store, error) {
	if c == nil {
		return nil, fmt.Errorf("qdrant: nil client: %w", retrieval.ErrInvalid)
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newStore(ctx, c, cfg)
}

func newStore(ctx context.Context, c *qc.Client, cfg Config) (*Store, error) {
	s := &Store{client: c, cfg: cfg}
	if err := s.ensureCollection(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// ensureCollection creates the collection if needed and learns its Dim.
func (s *Store) ensureCollection(ctx context.Context) error {
	const op = "open"
	var exists bool
	if err := s.call(ctx, op, func(ctx context.Context) (err error) {
		exists, err = s.client.CollectionExists(ctx, s.cfg.Collection)
		return err
	}); err != nil {
		return err
	}
	creating := !exists
	if creating {
		if s.cfg.Dim == 0 {
			return s.opErr(op, "collection does not exist and Config.Dim is 0, so it cannot be created: %w", retrieval.ErrInvalid)
		}
		err := s.call(ctx, op, func(ctx context.Context) error {
			return s.client.CreateCollection(ctx, s.createRequest())
		})
		if err != nil {
			// Another process may have created it since we looked, or an
			// earlier try of ours did and its answer was lost: if it
			// exists now, go on and check it like any existing collection.
			if again, xerr := s.client.CollectionExists(ctx, s.cfg.Collection); xerr != nil || !again {
				return err
			}
		}
	}
	info, err := s.collectionInfo(ctx, op)
	if err != nil {
		return err
	}
	params := info.GetConfig().GetParams()
	dense := params.GetVectorsConfig().GetParamsMap().GetMap()[DenseVector]
	if dense == nil {
		return s.opErr(op, "collection has no dense vector named %q: %w", DenseVector, retrieval.ErrInvalid)
	}
	if _, ok := params.GetSparseVectorsConfig().GetMap()[SparseVector]; !ok {
		return s.opErr(op, "collection has no sparse vector named %q: %w", SparseVector, retrieval.ErrInvalid)
	}
	dim := int(dense.GetSize())
	if s.cfg.Dim != 0 && s.cfg.Dim != dim {
		return s.opErr(op, "Config.Dim is %d but the collection's dense size is %d: %w", s.cfg.Dim, dim, retrieval.ErrDimension)
	}
	s.dim = dim
	if creating {
		// Only the store that creates a collection indexes it: a reader's
		// API key may not allow writes. EnsureIndexes upgrades an older
		// collection.
		return s.createIndexes(ctx, op, info.GetPayloadSchema(), false)
	}
	return nil
}

func (s *Store) collectionInfo(ctx context.Context, op string) (*qc.CollectionInfo, error) {
	var info *qc.CollectionInfo
	err := s.call(ctx, op, func(ctx context.Context) (err error) {
		info, err = s.client.GetCollectionInfo(ctx, s.cfg.Collection)
		return err
	})
	return info, err
}

// createRequest is the CreateCollection request for the configured
// collection: the named vectors, and the settings of Config that are set
// (the others left to Qdrant's defaults).
func (s *Store) createRequest() *qc.CreateCollection {
	c := &s.cfg
	dense := &qc.VectorParams{Size: uint64(c.Dim), Distance: qc.Distance_Cosine}
	if c.OnDiskVectors {
		dense.OnDisk = qc.PtrOf(true)
	}
	req := &qc.CreateCollection{
		CollectionName: c.Collection,
		VectorsConfig:  qc.NewVectorsConfigMap(map[string]*qc.VectorParams{DenseVector: dense}),
		SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
			SparseVector: {Modifier: qc.Modifier_Idf.Enum()},
		}),
	}
	opt := func(v uint32) *uint32 {
		if v == 0 {
			return nil
		}
		return qc.PtrOf(v)
	}
	req.ShardNumber = opt(c.ShardNumber)
	req.ReplicationFactor = opt(c.ReplicationFactor)
	req.WriteConsistencyFactor = opt(c.WriteConsistencyFactor)
	if c.OnDiskPayload {
		req.OnDiskPayload = qc.PtrOf(true)
	}
	var hnsw qc.HnswConfigDiff
	if c.HNSWM > 0 {
		hnsw.M = qc.PtrOf(uint64(c.HNSWM))
	}
	if c.HNSWEfConstruct > 0 {
		hnsw.EfConstruct = qc.PtrOf(uint64(c.HNSWEfConstruct))
	}
	if c.TenantGraphs {
		hnsw.PayloadM = qc.PtrOf(uint64(cmp.Or(c.HNSWM, 16)))
		hnsw.M = qc.PtrOf(uint64(0))
	}
	if hnsw.M != nil || hnsw.EfConstruct != nil || hnsw.PayloadM != nil {
		req.HnswConfig = &hnsw
	}
	if c.Quantization == QuantizationInt8 {
		req.QuantizationConfig = qc.NewQuantizationScalar(&qc.ScalarQuantization{
			Type:      qc.QuantizationType_Int8,
			Quantile:  qc.PtrOf(float32(0.99)),
			AlwaysRam: qc.PtrOf(true),
		})
	}
	return req
}

// indexRequest is the CreateFieldIndex request for field: a keyword
// index, the tenant's marked is_tenant so that Qdrant keeps each tenant's
// points together on disk and plans tenant-filtered searches by it. The
// doc_id index builds no HNSW links (enable_hnsw false, Qdrant 1.17; older
// servers ignore the field): a document has far fewer chunks than
// Qdrant's full-scan threshold, so a document filter is answered by an
// exact scan of its chunks, and links per document would only slow
// indexing.
func (s *Store) indexRequest(field string) *qc.CreateFieldIndexCollection {
	req := &qc.CreateFieldIndexCollection{
		CollectionName: s.cfg.Collection,
		FieldName:      field,
		FieldType:      qc.FieldType_FieldTypeKeyword.Enum(),
		Wait:           qc.PtrOf(true),
	}
	switch field {
	case fieldTenant:
		req.FieldIndexParams = qc.NewPayloadIndexParamsKeyword(&qc.KeywordIndexParams{IsTenant: qc.PtrOf(true)})
	case fieldDocID:
		req.FieldIndexParams = qc.NewPayloadIndexParamsKeyword(&qc.KeywordIndexParams{EnableHnsw: qc.PtrOf(false)})
	}
	return req
}

// createIndexes creates the payload indexes (indexedFields) missing from
// schema. With upgrade, a tenant index that is not marked is_tenant is
// created again with the mark, which makes Qdrant rebuild it.
func (s *Store) createIndexes(ctx context.Context, op string, schema map[string]*qc.PayloadSchemaInfo, upgrade bool) error {
	for _, f := range indexedFields {
		if have, ok := schema[f]; ok && have.GetDataType() == qc.PayloadSchemaType_Keyword {
			isTenant := have.GetParams().GetKeywordIndexParams().GetIsTenant()
			if f != fieldTenant || isTenant || !upgrade {
				continue
			}
		}
		req := s.indexRequest(f)
		if err := s.call(ctx, op+": index "+f, func(ctx context.Context) error {
			_, err := s.client.CreateFieldIndex(ctx, req)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// EnsureIndexes creates the payload indexes a collection created by an
// older version (or by hand) lacks: keyword indexes on tenant (is_tenant),
// source, doc_id and content_type. A tenant index without is_tenant is
// replaced, which makes Qdrant rebuild it (tenant-filtered searches may be
// slower until it is done). It needs an API key allowed to manage the
// collection. Open does this itself only for a collection it creates.
func (s *Store) EnsureIndexes(ctx context.Context) error {
	const op = "ensure indexes"
	info, err := s.collectionInfo(ctx, op)
	if err != nil {
		return err
	}
	return s.createIndexes(ctx, op, info.GetPayloadSchema(), true)
}

// call runs fn with the retry policy of Config.Retries and wraps its
// error for op.
func (s *Store) call(ctx context.Context, op string, fn func(context.Context) error) error {
	tries, err := s.retry(ctx, fn)
	if err == nil {
		return nil
	}
	werr := s.wrapErr(ctx, op, err)
	if oe, ok := werr.(*OpError); ok {
		oe.Tries = tries
	}
	return werr
}

// Dim returns the dense dimension of the collection.
func (s *Store) Dim() int { return s.dim }

// Config returns the store's configuration, defaults applied.
func (s *Store) Config() Config { return s.cfg }

// Close releases the connection if the store opened it. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.owns {
			s.closeErr = s.client.Close()
		}
	})
	return s.closeErr
}

// DeleteCollection drops the whole collection, every tenant included. The
// store must not be used for anything but Close afterwards.
func (s *Store) DeleteCollection(ctx context.Context) error {
	return s.call(ctx, "delete collection", func(ctx context.Context) error {
		return s.client.DeleteCollection(ctx, s.cfg.Collection)
	})
}

// Upsert inserts or replaces chunks. A chunk's point id derives from its
// tenant and ID (see PointID), so upserting the same chunks again changes
// nothing, and two tenants' chunks never replace each other even with equal
// IDs (a chunk re-ingested under another tenant is a new point: delete the
// old one by DeleteDocument). Every chunk is checked (non-empty ID, vector of Dim) before
// anything is sent. Points go in batches of Config.BatchSize, each applied
// before the next is sent (wait=true) and each retried on transient
// faults (Config.Retries); if a batch still fails, the earlier ones stay
// applied, and retrying the whole call is safe.
func (s *Store) Upsert(ctx context.Context, chunks []retrieval.Chunk) error {
	const op = "upsert"
	if err := ctx.Err(); err != nil {
		return s.wrapErr(ctx, op, err)
	}
	if len(chunks) == 0 {
		return nil
	}
	points, err := s.points(op, chunks)
	if err != nil {
		return err
	}
	return s.send(ctx, op, points)
}

// points checks chunks and converts them to points. Later duplicates win,
// as if the chunks were upserted one by one.
func (s *Store) points(op string, chunks []retrieval.Chunk) ([]*qc.PointStruct, error) {
	pos := make(map[string]int, len(chunks))
	points := make([]*qc.PointStruct, 0, len(chunks))
	for i := range chunks {
		c := &chunks[i]
		if c.ID == "" {
			return nil, s.opErr(op, "chunk %d has an empty ID: %w", i, retrieval.ErrInvalid)
		}
		if len(c.Vector) != s.dim {
			return nil, s.opErr(op, "chunk %q has a %d-d vector, the collection wants %d: %w", c.ID, len(c.Vector), s.dim, retrieval.ErrDimension)
		}
		id := PointID(c.Tenant, c.ID)
		vecs := map[string]*qc.Vector{DenseVector: qc.NewVectorDense(c.Vector)}
		if idx, val := docSparse(s.cfg.Analyzer.Tokens(c.Text), s.cfg.AvgDocLen); len(idx) > 0 {
			vecs[SparseVector] = qc.NewVectorSparse(idx, val)
		}
		p := &qc.PointStruct{Id: qc.NewIDUUID(id), Payload: toPayload(c), Vectors: qc.NewVectorsMap(vecs)}
		if j, dup := pos[id]; dup {
			points[j] = p
			continue
		}
		pos[id] = len(points)
		points = append(points, p)
	}
	return points, nil
}

// send upserts points in batches of Config.BatchSize, each applied before
// the next is sent, each retried on its own (see Config.Retries).
func (s *Store) send(ctx context.Context, op string, points []*qc.PointStruct) error {
	nb := (len(points) + s.cfg.BatchSize - 1) / s.cfg.BatchSize
	for b := range nb {
		batch := points[b*s.cfg.BatchSize : min((b+1)*s.cfg.BatchSize, len(points))]
		req := &qc.UpsertPoints{CollectionName: s.cfg.Collection, Wait: qc.PtrOf(true), Points: batch}
		bop := op
		if nb > 1 {
			bop = fmt.Sprintf("%s (batch %d of %d, %d earlier ones applied)", op, b+1, nb, b)
		}
		if err := s.call(ctx, bop, func(ctx context.Context) error {
			_, err := s.client.Upsert(ctx, req)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteDocument removes every chunk of docID within scope (a filter on
// tenant and doc_id). Deleting a document that has no chunks is not an
// error.
func (s *Store) DeleteDocument(ctx context.Context, scope retrieval.Scope, docID string) error {
	return s.deleteDocument(ctx, "delete document", scope, docID)
}

func (s *Store) deleteDocument(ctx context.Context, op string, scope retrieval.Scope, docID string) error {
	if err := ctx.Err(); err != nil {
		return s.wrapErr(ctx, op, err)
	}
	req := &qc.DeletePoints{
		CollectionName: s.cfg.Collection,
		Wait:           qc.PtrOf(true),
		Points: qc.NewPointsSelectorFilter(&qc.Filter{Must: []*qc.Condition{
			qc.NewMatchKeyword(fieldTenant, scope.Tenant),
			qc.NewMatchKeyword(fieldDocID, docID),
		}}),
	}
	return s.call(ctx, op, func(ctx context.Context) error {
		_, err := s.client.Delete(ctx, req)
		return err
	})
}

// ReplaceDocument replaces the chunks of docID within scope by chunks,
// which must all carry docID and the scope's tenant; with no chunks it
// deletes the document. The whole batch is checked before anything is
// sent.
//
// Qdrant has no transaction spanning several operations, so the
// replacement is two calls ordered so that readers never find the
// document missing: the new chunks are upserted first (in batches, as by
// Upsert), then one delete by filter removes the document's chunks whose
// point ids are not among the new ones. Between the two calls a search
// can see both versions at once: the old chunks beside the new ones (a
// chunk id kept by the new version already shows its new text). If the
// process or the connection dies between them, both versions stay until
// the document is replaced or deleted again; the call returned an error,
// and retrying it finishes the job.
func (s *Store) ReplaceDocument(ctx context.Context, scope retrieval.Scope, docID string, chunks []retrieval.Chunk) error {
	const op = "replace document"
	if err := ctx.Err(); err != nil {
		return s.wrapErr(ctx, op, err)
	}
	if docID == "" {
		return s.opErr(op, "empty document id: %w", retrieval.ErrInvalid)
	}
	for i := range chunks {
		if chunks[i].DocID != docID || chunks[i].Tenant != scope.Tenant {
			return s.opErr(op, "chunk %d belongs to document %q of tenant %q, not %q of tenant %q: %w",
				i, chunks[i].DocID, chunks[i].Tenant, docID, scope.Tenant, retrieval.ErrInvalid)
		}
	}
	if len(chunks) == 0 {
		return s.deleteDocument(ctx, op, scope, docID)
	}
	points, err := s.points(op, chunks)
	if err != nil {
		return err
	}
	if err := s.send(ctx, op, points); err != nil {
		return err
	}
	keep := make([]*qc.PointId, len(points))
	for i, p := range points {
		keep[i] = p.Id
	}
	req := &qc.DeletePoints{
		CollectionName: s.cfg.Collection,
		Wait:           qc.PtrOf(true),
		Points: qc.NewPointsSelectorFilter(&qc.Filter{
			Must: []*qc.Condition{
				qc.NewMatchKeyword(fieldTenant, scope.Tenant),
				qc.NewMatchKeyword(fieldDocID, docID),
			},
			MustNot: []*qc.Condition{qc.NewHasID(keep...)},
		}),
	}
	return s.call(ctx, op+" (the new chunks are in, the old ones not yet removed)", func(ctx context.Context) error {
		_, err := s.client.Delete(ctx, req)
		return err
	})
}

// scrollPage is the number of points a Documents listing reads per call.
const scrollPage = 256

// Documents implements retrieval.Lister: it scrolls through the scope's
// points (payload without the text, no vectors), a page at a time, and
// groups them by document. Each document is described by its first chunk
// (lowest position, then chunk id). Scrolling is not a snapshot: writes
// made while it runs may or may not show.
func (s *Store) Documents(ctx context.Context, scope retrieval.Scope) ([]retrieval.DocInfo, error) {
	const op = "documents"
	if err := ctx.Err(); err != nil {
		return nil, s.wrapErr(ctx, op, err)
	}
	type doc struct {
		first retrieval.Chunk
		n     int
	}
	docs := map[string]*doc{}
	filter := &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(fieldTenant, scope.Tenant)}}
	err := s.scroll(ctx, op, filter, qc.NewWithPayloadExclude(fieldText), func(p *qc.RetrievedPoint) {
		c := fromPayload(p.GetPayload())
		d := docs[c.DocID]
		if d == nil {
			d = &doc{first: c}
			docs[c.DocID] = d
		} else if c.Position < d.first.Position || c.Position == d.first.Position && c.ID < d.first.ID {
			d.first = c
		}
		d.n++
	})
	if err != nil {
		return nil, err
	}
	out := make([]retrieval.DocInfo, 0, len(docs))
	for _, d := range docs {
		c := &d.first
		info := retrieval.DocInfo{
			DocID: c.DocID, Origin: c.Meta[retrieval.MetaOrigin], Source: c.Source, Title: c.Title,
			ContentType: c.ContentType, Chunks: d.n, Hash: c.Meta[retrieval.MetaContentHash],
		}
		if t, err := time.Parse(time.RFC3339, c.Meta[retrieval.MetaIngestedAt]); err == nil {
			info.IngestedAt = t
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b retrieval.DocInfo) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.DocID, b.DocID))
	})
	return out, nil
}

// DocumentChunks returns every chunk of docID within scope, ordered by
// position (then chunk id), read by scrolling a filter on tenant and
// doc_id: exact, unlike a search, whose HNSW answer may leave chunks out.
// The chunks carry their text and metadata but no vectors. A document
// with no chunks gives nil, nil. It is what the MCP fetch tool and
// resources use to read a document (mcpserver.ChunkReader).
func (s *Store) DocumentChunks(ctx context.Context, scope retrieval.Scope, docID string) ([]retrieval.Chunk, error) {
	const op = "document chunks"
	if err := ctx.Err(); err != nil {
		return nil, s.wrapErr(ctx, op, err)
	}
	var chunks []retrieval.Chunk
	filter := &qc.Filter{Must: []*qc.Condition{
		qc.NewMatchKeyword(fieldTenant, scope.Tenant),
		qc.NewMatchKeyword(fieldDocID, docID),
	}}
	if err := s.scroll(ctx, op, filter, qc.NewWithPayload(true), func(p *qc.RetrievedPoint) {
		chunks = append(chunks, fromPayload(p.GetPayload()))
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(chunks, func(a, b retrieval.Chunk) int {
		return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ID, b.ID))
	})
	return chunks, nil
}

// scroll calls fn on every point matching filter, a page of scrollPage
// points at a time (each page retried on its own), without vectors.
func (s *Store) scroll(ctx context.Context, op string, filter *qc.Filter, payload *qc.WithPayloadSelector, fn func(*qc.RetrievedPoint)) error {
	var offset *qc.PointId
	for {
		req := &qc.ScrollPoints{
			CollectionName: s.cfg.Collection,
			Filter:         filter,
			Offset:         offset,
			Limit:          qc.PtrOf(uint32(scrollPage)),
			WithPayload:    payload,
			WithVectors:    qc.NewWithVectors(false),
		}
		var (
			pts  []*qc.RetrievedPoint
			next *qc.PointId
		)
		if err := s.call(ctx, op, func(ctx context.Context) (err error) {
			pts, next, err = s.client.ScrollAndOffset(ctx, req)
			return err
		}); err != nil {
			return err
		}
		for _, p := range pts {
			fn(p)
		}
		if next == nil || len(pts) == 0 {
			return nil
		}
		offset = next
	}
}

// SearchDense returns the req.K chunks nearest to req.Vector by cosine.
func (s *Store) SearchDense(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	const op = "search dense"
	filter, ok, err := s.prepare(ctx, op, req, true, false)
	if err != nil || !ok {
		return nil, err
	}
	return s.query(ctx, op, retrieval.MethodDense, &qc.QueryPoints{
		Query:  qc.NewQueryDense(req.Vector),
		Using:  qc.PtrOf(DenseVector),
		Filter: filter,
		Limit:  qc.PtrOf(uint64(req.K)),
	})
}

// SearchSparse returns the req.K best BM25 matches for req.Text. An empty
// text is retrieval.ErrInvalid; a text with no terms (punctuation only)
// finds nothing.
func (s *Store) SearchSparse(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	const op = "search sparse"
	filter, ok, err := s.prepare(ctx, op, req, false, true)
	if err != nil || !ok {
		return nil, err
	}
	idx, val := querySparse(s.cfg.Analyzer.Tokens(req.Text))
	if len(idx) == 0 {
		return nil, nil
	}
	return s.query(ctx, op, retrieval.MethodBM25, &qc.QueryPoints{
		Query:  qc.NewQuerySparse(idx, val),
		Using:  qc.PtrOf(SparseVector),
		Filter: filter,
		Limit:  qc.PtrOf(uint64(req.K)),
	})
}

// SearchHybrid runs a dense and a sparse leg of req.Candidates each
// (default retrieval.DefaultCandidates) and fuses them with Qdrant's RRF,
// with k set so that the scores equal retrieval.FuseRRF's for req.RRFK
// (Qdrant's k is the textbook k plus one; this needs Qdrant 1.16 or later).
// A text without terms leaves only the dense leg. The scope filter is set on
// the query and on each leg. Qdrant ranks equal scores inside a leg in an
// unspecified order, so when a leg has ties the fused scores may differ from
// retrieval.FuseRRF over the same legs sorted client-side.
func (s *Store) SearchHybrid(ctx context.Context, req retrieval.Request) ([]retrieval.Hit, error) {
	const op = "search hybrid"
	filter, ok, err := s.prepare(ctx, op, req, true, false)
	if err != nil || !ok {
		return nil, err
	}
	cand := req.Candidates
	if cand <= 0 {
		cand = retrieval.DefaultCandidates
	}
	k := req.RRFK
	if k <= 0 {
		k = retrieval.DefaultRRFK
	}
	prefetch := []*qc.PrefetchQuery{{
		Query:  qc.NewQueryDense(req.Vector),
		Using:  qc.PtrOf(DenseVector),
		Filter: filter,
		Limit:  qc.PtrOf(uint64(cand)),
	}}
	if idx, val := querySparse(s.cfg.Analyzer.Tokens(req.Text)); len(idx) > 0 {
		prefetch = append(prefetch, &qc.PrefetchQuery{
			Query:  qc.NewQuerySparse(idx, val),
			Using:  qc.PtrOf(SparseVector),
			Filter: filter,
			Limit:  qc.PtrOf(uint64(cand)),
		})
	}
	rrf := &qc.Rrf{K: qc.PtrOf(uint32(k + 1))}
	if req.DenseWeight > 0 || req.SparseWeight > 0 {
		// Weighted RRF (Qdrant 1.17): one weight per prefetch, in order.
		w := func(x float64) float32 {
			if x > 0 {
				return float32(x)
			}
			return 1
		}
		rrf.Weights = []float32{w(req.DenseWeight)}
		if len(prefetch) > 1 {
			rrf.Weights = append(rrf.Weights, w(req.SparseWeight))
		}
	}
	return s.query(ctx, op, retrieval.MethodHybrid, &qc.QueryPoints{
		Prefetch: prefetch,
		Query:    qc.NewQueryRRF(rrf),
		Filter:   filter,
		Limit:    qc.PtrOf(uint64(req.K)),
	})
}

// prepare validates a request and builds its filter. ok is false when the
// filter cannot match, so the search returns nil, nil without a call.
func (s *Store) prepare(ctx context.Context, op string, req retrieval.Request, dense, text bool) (*qc.Filter, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, s.wrapErr(ctx, op, err)
	}
	if req.K <= 0 {
		return nil, false, s.opErr(op, "K is %d, want > 0: %w", req.K, retrieval.ErrInvalid)
	}
	if dense && len(req.Vector) != s.dim {
		return nil, false, s.opErr(op, "query vector is %d-d, the collection wants %d: %w", len(req.Vector), s.dim, retrieval.ErrDimension)
	}
	if text && strings.TrimSpace(req.Text) == "" {
		return nil, false, s.opErr(op, "empty query text: %w", retrieval.ErrInvalid)
	}
	f, ok, err := buildFilter(req.Scope, req.Filter)
	if err != nil {
		return nil, false, s.opErr(op, "%w", err)
	}
	return f, ok, nil
}

// query runs q on the collection and converts the points to hits.
func (s *Store) query(ctx context.Context, op string, method retrieval.Method, q *qc.QueryPoints) ([]retrieval.Hit, error) {
	q.CollectionName = s.cfg.Collection
	q.WithPayload = qc.NewWithPayload(true)
	var pts []*qc.ScoredPoint
	if err := s.call(ctx, op, func(ctx context.Context) (err error) {
		pts, err = s.client.Query(ctx, q)
		return err
	}); err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, nil
	}
	hits := make([]retrieval.Hit, len(pts))
	for i, p := range pts {
		hits[i] = retrieval.Hit{Chunk: fromPayload(p.GetPayload()), Score: float64(p.GetScore()), Method: method}
	}
	sortHits(hits)
	return hits, nil
}
