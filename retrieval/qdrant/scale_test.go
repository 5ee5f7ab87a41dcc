package qdrant_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/qdrant"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// fastRetries makes retry tests quick: the backoff policy is the same,
// with millisecond ceilings.
func fastRetries(cfg qdrant.Config) qdrant.Config {
	cfg.RetryBase = time.Millisecond
	cfg.RetryMax = 4 * time.Millisecond
	return cfg
}

// TestTenantIndexIsTenant: a collection the store creates has keyword
// payload indexes on tenant (marked is_tenant, so Qdrant co-locates and
// plans by tenant), source, doc_id and content_type.
func TestTenantIndexIsTenant(t *testing.T) {
	srv := qdranttest.Start(t)
	st, err := qdrant.Open(context.Background(), fakeConfig(srv, "kb", 3))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, f := range []string{"tenant", "source", "doc_id", "content_type"} {
		typ, params, ok := srv.FieldIndex("kb", f)
		if !ok || typ != qc.FieldType_FieldTypeKeyword {
			t.Errorf("%s: index %v, %v; want a keyword index", f, typ, ok)
			continue
		}
		if got, want := params.GetKeywordIndexParams().GetIsTenant(), f == "tenant"; got != want {
			t.Errorf("%s: is_tenant = %v, want %v", f, got, want)
		}
		kp := params.GetKeywordIndexParams()
		if noLinks := kp != nil && kp.EnableHnsw != nil && !kp.GetEnableHnsw(); noLinks != (f == "doc_id") {
			t.Errorf("%s: enable_hnsw = %v, want false for doc_id only", f, kp.GetEnableHnsw())
		}
	}
}

// TestEnsureIndexes: a collection made without the indexes, or with a
// tenant index that lacks is_tenant, gets them from EnsureIndexes; a plain
// Open of an existing collection creates nothing.
func TestEnsureIndexes(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	admin, err := qc.NewClient(&qc.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	err = admin.CreateCollection(ctx, &qc.CreateCollection{
		CollectionName: "old",
		VectorsConfig:  qc.NewVectorsConfigMap(map[string]*qc.VectorParams{qdrant.DenseVector: {Size: 2, Distance: qc.Distance_Cosine}}),
		SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{
			qdrant.SparseVector: {Modifier: qc.Modifier_Idf.Enum()}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateFieldIndex(ctx, &qc.CreateFieldIndexCollection{CollectionName: "old", FieldName: "tenant",
		FieldType: qc.FieldType_FieldTypeKeyword.Enum(), Wait: qc.PtrOf(true)}); err != nil {
		t.Fatal(err)
	}
	st, err := qdrant.Open(ctx, fakeConfig(srv, "old", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := len(srv.FieldIndexes("old")); n != 1 {
		t.Errorf("Open of an existing collection changed its indexes: %v", srv.FieldIndexes("old"))
	}
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tenant", "source", "doc_id", "content_type"} {
		typ, params, ok := srv.FieldIndex("old", f)
		if !ok || typ != qc.FieldType_FieldTypeKeyword || params.GetKeywordIndexParams().GetIsTenant() != (f == "tenant") {
			t.Errorf("%s after EnsureIndexes: %v %v %v", f, typ, params, ok)
		}
	}
	// Once up to date, EnsureIndexes sends nothing.
	before := srv.Calls("CreateFieldIndex")
	if err := st.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.Calls("CreateFieldIndex"); got != before {
		t.Errorf("EnsureIndexes on an indexed collection made %d calls", got-before)
	}
}

// TestCollectionSettings: the sharding, replication, on-disk, HNSW and
// quantization settings of Config reach Qdrant's Create request, and only
// the ones set.
func TestCollectionSettings(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	cfg := fakeConfig(srv, "tuned", 8)
	cfg.ShardNumber, cfg.ReplicationFactor, cfg.WriteConsistencyFactor = 6, 3, 2
	cfg.OnDiskVectors, cfg.OnDiskPayload = true, true
	cfg.HNSWM, cfg.HNSWEfConstruct = 32, 256
	cfg.Quantization = qdrant.QuantizationInt8
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := srv.Created("tuned")
	if r.ShardNumber == nil || *r.ShardNumber != 6 || r.GetReplicationFactor() != 3 || r.GetWriteConsistencyFactor() != 2 {
		t.Errorf("shards/replication = %v/%v/%v, want 6/3/2", r.ShardNumber, r.ReplicationFactor, r.WriteConsistencyFactor)
	}
	if !r.GetOnDiskPayload() || !r.GetVectorsConfig().GetParamsMap().GetMap()[qdrant.DenseVector].GetOnDisk() {
		t.Errorf("on_disk payload/vectors not set: %v", r)
	}
	if h := r.GetHnswConfig(); h.M == nil || h.GetM() != 32 || h.GetEfConstruct() != 256 || h.PayloadM != nil {
		t.Errorf("hnsw = %v, want m 32, ef_construct 256, no payload_m", h)
	}
	sq := r.GetQuantizationConfig().GetScalar()
	if sq.GetType() != qc.QuantizationType_Int8 || sq.GetQuantile() != 0.99 || !sq.GetAlwaysRam() {
		t.Errorf("quantization = %v, want scalar int8, quantile 0.99, always_ram", r.GetQuantizationConfig())
	}

	// Tenant graphs: no global graph (m 0), one per tenant (payload_m).
	cfg = fakeConfig(srv, "tenants", 8)
	cfg.TenantGraphs = true
	st, err = qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if h := srv.Created("tenants").GetHnswConfig(); h.M == nil || h.GetM() != 0 || h.GetPayloadM() != 16 {
		t.Errorf("tenant graphs: hnsw = %v, want m 0 and payload_m 16", h)
	}

	// Nothing set: nothing sent, Qdrant's defaults apply.
	st, err = qdrant.Open(ctx, fakeConfig(srv, "plain", 8))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	r = srv.Created("plain")
	if r.ShardNumber != nil || r.ReplicationFactor != nil || r.WriteConsistencyFactor != nil || r.OnDiskPayload != nil ||
		r.HnswConfig != nil || r.QuantizationConfig != nil || r.GetVectorsConfig().GetParamsMap().GetMap()[qdrant.DenseVector].OnDisk != nil {
		t.Errorf("a default Config sent settings: %v", r)
	}

	for name, mutate := range map[string]func(*qdrant.Config){
		"write consistency above replication": func(c *qdrant.Config) { c.ReplicationFactor, c.WriteConsistencyFactor = 2, 3 },
		"ef_construct 2":                      func(c *qdrant.Config) { c.HNSWEfConstruct = 2 },
		"negative m":                          func(c *qdrant.Config) { c.HNSWM = -1 },
		"unknown quantization":                func(c *qdrant.Config) { c.Quantization = "pq" },
	} {
		c := fakeConfig(srv, "refused", 8)
		mutate(&c)
		if _, err := qdrant.Open(ctx, c); !errors.Is(err, retrieval.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if srv.Created("refused") != nil {
		t.Error("a refused Config created a collection")
	}
}

func chunksN(n, dim int) []retrieval.Chunk {
	out := make([]retrieval.Chunk, n)
	for i := range out {
		v := make([]float32, dim)
		v[i%dim] = 1
		v[(i+1)%dim] = float32(i%7) / 7
		out[i] = retrieval.Chunk{ID: fmt.Sprint(i), DocID: fmt.Sprint(i / 4), Text: fmt.Sprintf("chunk %d text", i), Vector: v}
	}
	return out
}

func countAll(t *testing.T, st *qdrant.Store, dim int) int {
	t.Helper()
	v := make([]float32, dim)
	v[0] = 1
	hits, err := st.SearchDense(context.Background(), retrieval.Request{Vector: v, K: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return len(hits)
}

// TestUpsertRetriesTransientFaults: a batch that fails with Unavailable,
// ResourceExhausted or a server-side DeadlineExceeded is sent again after
// a backoff, and the upsert succeeds with every point in.
func TestUpsertRetriesTransientFaults(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) {
			srv := qdranttest.Start(t)
			cfg := fastRetries(fakeConfig(srv, "kb", 4))
			cfg.BatchSize = 10
			st, err := qdrant.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			srv.FailNext("Upsert", code, 3) // the first batch fails three times: the last retry succeeds
			if err := st.Upsert(context.Background(), chunksN(25, 4)); err != nil {
				t.Fatalf("upsert with %d injected %v: %v", 3, code, err)
			}
			if got := srv.Calls("Upsert"); got != 3+3 {
				t.Errorf("Upsert calls = %d, want 3 batches plus 3 retries", got)
			}
			if n := countAll(t, st, 4); n != 25 {
				t.Errorf("%d points stored, want 25", n)
			}
		})
	}
}

// TestUpsertGivesUp: after Retries retries the error is returned, as
// ErrUnavailable, naming the batch and the number of tries; earlier
// batches stay applied.
func TestUpsertGivesUp(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := fastRetries(fakeConfig(srv, "kb", 4))
	cfg.BatchSize, cfg.Retries = 10, 2
	st, err := qdrant.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Batch 1 passes; batch 2 fails on every try.
	if err := st.Upsert(context.Background(), chunksN(10, 4)); err != nil {
		t.Fatal(err)
	}
	srv.FailNext("Upsert", codes.Unavailable, 3)
	err = st.Upsert(context.Background(), chunksN(10, 4))
	var oe *qdrant.OpError
	if !errors.Is(err, retrieval.ErrUnavailable) || !errors.As(err, &oe) || oe.Tries != 3 {
		t.Fatalf("err = %v, want ErrUnavailable after 3 tries", err)
	}
	if got := srv.Calls("Upsert"); got != 1+3 {
		t.Errorf("Upsert calls = %d, want 4", got)
	}
	// Retries < 0: one try only.
	cfg.Retries = -1
	cfg.Collection = "kb2"
	st2, err := qdrant.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	before := srv.Calls("Upsert")
	srv.FailNext("Upsert", codes.Unavailable, 1)
	if err := st2.Upsert(context.Background(), chunksN(3, 4)); !errors.Is(err, retrieval.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	if got := srv.Calls("Upsert") - before; got != 1 {
		t.Errorf("with retries disabled: %d calls, want 1", got)
	}
}

// TestNoRetryOnInvalidArgument: a request Qdrant refuses is not sent
// again.
func TestNoRetryOnInvalidArgument(t *testing.T) {
	srv := qdranttest.Start(t)
	st, err := qdrant.Open(context.Background(), fastRetries(fakeConfig(srv, "kb", 4)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, code := range []codes.Code{codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.Internal} {
		before := srv.Calls("Upsert")
		srv.FailNext("Upsert", code, 1)
		if err := st.Upsert(context.Background(), chunksN(2, 4)); err == nil {
			t.Errorf("%v: upsert succeeded", code)
		}
		if got := srv.Calls("Upsert") - before; got != 1 {
			t.Errorf("%v: %d calls, want 1 (never retried)", code, got)
		}
	}
}

// TestRetryStopsWhenContextEnds: cancelling during the backoff returns at
// once with the context's error, and a DeadlineExceeded because the
// caller's own deadline passed is not retried.
func TestRetryStopsWhenContextEnds(t *testing.T) {
	srv := qdranttest.Start(t)
	cfg := fakeConfig(srv, "kb", 4)
	cfg.RetryBase, cfg.RetryMax = time.Hour, time.Hour // a retry would wait for ever
	st, err := qdrant.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	srv.FailNext("Upsert", codes.Unavailable, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.Calls("Upsert") == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // into the backoff
		cancel()
	}()
	start := time.Now()
	err = st.Upsert(ctx, chunksN(2, 4))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v, not when the context ended", d)
	}

	// The caller's deadline: the slow call fails with DeadlineExceeded and
	// is not tried again.
	srv.SetDelay(time.Second)
	defer srv.SetDelay(0)
	before := srv.Calls("Upsert")
	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if err := st.Upsert(ctx, chunksN(2, 4)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if got := srv.Calls("Upsert") - before; got != 1 {
		t.Errorf("%d calls after the caller's deadline, want 1", got)
	}
}

// TestSearchAndDeleteRetry: reads and deletes use the same policy.
func TestSearchAndDeleteRetry(t *testing.T) {
	srv := qdranttest.Start(t)
	st, err := qdrant.Open(context.Background(), fastRetries(fakeConfig(srv, "kb", 4)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.Upsert(ctx, chunksN(8, 4)); err != nil {
		t.Fatal(err)
	}
	srv.FailNext("Query", codes.Unavailable, 2)
	if n := countAll(t, st, 4); n != 8 {
		t.Errorf("search after 2 faults found %d, want 8", n)
	}
	srv.FailNext("Delete", codes.ResourceExhausted, 1)
	if err := st.DeleteDocument(ctx, retrieval.Scope{}, "0"); err != nil {
		t.Fatal(err)
	}
	if n := countAll(t, st, 4); n != 4 {
		t.Errorf("after deleting document 0: %d chunks, want 4", n)
	}
	srv.FailNext("Scroll", codes.Unavailable, 1)
	docs, err := st.Documents(ctx, retrieval.Scope{})
	if err != nil || len(docs) != 1 {
		t.Errorf("Documents after a fault = %v, %v; want document 1", docs, err)
	}
}

// TestDocumentChunks reads a document's chunks exactly, in position
// order, across scroll pages and within the caller's tenant only.
func TestDocumentChunks(t *testing.T) {
	srv := qdranttest.Start(t)
	st := openFake(t, srv, 2)
	ctx := context.Background()
	var chunks []retrieval.Chunk
	const n = 600 // more than two scroll pages
	for i := range n {
		chunks = append(chunks, retrieval.Chunk{ID: fmt.Sprintf("c%03d", i), DocID: "big", Position: n - 1 - i,
			Text: fmt.Sprint("passage ", i), Vector: vec(1, float32(i))})
	}
	chunks = append(chunks,
		retrieval.Chunk{ID: "o1", DocID: "other", Text: "x", Vector: vec(1, 0)},
		retrieval.Chunk{ID: "t1", DocID: "big", Tenant: "t", Text: "theirs", Vector: vec(1, 0)})
	if err := st.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	got, err := st.DocumentChunks(ctx, retrieval.Scope{}, "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d chunks, want %d", len(got), n)
	}
	for i, c := range got {
		if c.Position != i || c.DocID != "big" || c.Tenant != "" || c.Text == "" {
			t.Fatalf("chunk %d = %+v, want position %d of document big with its text", i, c, i)
		}
	}
	if got, err := st.DocumentChunks(ctx, retrieval.Scope{Tenant: "t"}, "big"); err != nil || len(got) != 1 || got[0].Text != "theirs" {
		t.Errorf("tenant t's document big = %v, %v; want its one chunk", got, err)
	}
	if got, err := st.DocumentChunks(ctx, retrieval.Scope{}, "missing"); err != nil || got != nil {
		t.Errorf("missing document = %v, %v; want nil, nil", got, err)
	}
}

func TestParseURLCollectionSettings(t *testing.T) {
	c, err := qdrant.ParseURL("qdrant://h:6334/kb?shard_number=4&replication_factor=2&write_consistency_factor=2" +
		"&on_disk_vectors=true&on_disk_payload=1&tenant_graphs=true&hnsw_m=32&hnsw_ef_construct=200&quantization=int8&retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.ShardNumber != 4 || c.ReplicationFactor != 2 || c.WriteConsistencyFactor != 2 || !c.OnDiskVectors || !c.OnDiskPayload ||
		!c.TenantGraphs || c.HNSWM != 32 || c.HNSWEfConstruct != 200 || c.Quantization != "int8" || c.Retries != -1 {
		t.Errorf("ParseURL = %+v", c)
	}
	for _, bad := range []string{
		"qdrant://h/kb?shard_number=0", "qdrant://h/kb?replication_factor=x", "qdrant://h/kb?on_disk_payload=maybe",
		"qdrant://h/kb?quantization=binary", "qdrant://h/kb?hnsw_ef_construct=2", "qdrant://h/kb?retries=many",
		"qdrant://h/kb?replication_factor=1&write_consistency_factor=2",
	} {
		if _, err := qdrant.ParseURL(bad); !errors.Is(err, retrieval.ErrInvalid) {
			t.Errorf("ParseURL(%q): err = %v, want ErrInvalid", bad, err)
		}
	}
}

// settingsRoundTrip opens a store with every collection setting on a new
// collection, then reads the collection back with admin and checks that
// the server reports what was asked: the indexes with is_tenant and the
// shard, replication, on-disk, HNSW and quantization settings.
func settingsRoundTrip(t *testing.T, cfg qdrant.Config, admin *qc.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg.ReplicationFactor, cfg.WriteConsistencyFactor = 1, 1 // a single node has one replica of each shard
	cfg.ShardNumber = 2
	cfg.OnDiskVectors, cfg.OnDiskPayload = true, true
	cfg.HNSWEfConstruct, cfg.TenantGraphs = 64, true
	cfg.Quantization = qdrant.QuantizationInt8
	st, err := qdrant.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Upsert(ctx, chunksN(3, cfg.Dim)); err != nil {
		t.Fatal(err)
	}
	info, err := admin.GetCollectionInfo(ctx, cfg.Collection)
	if err != nil {
		t.Fatal(err)
	}
	p := info.GetConfig().GetParams()
	if p.GetShardNumber() != 2 || p.GetReplicationFactor() != 1 || p.GetWriteConsistencyFactor() != 1 || !p.GetOnDiskPayload() {
		t.Errorf("params = %v", p)
	}
	if !p.GetVectorsConfig().GetParamsMap().GetMap()[qdrant.DenseVector].GetOnDisk() {
		t.Error("dense vectors not on disk")
	}
	if h := info.GetConfig().GetHnswConfig(); h.GetM() != 0 || h.GetPayloadM() != 16 || h.GetEfConstruct() != 64 {
		t.Errorf("hnsw = %v, want m 0, payload_m 16, ef_construct 64", h)
	}
	if sq := info.GetConfig().GetQuantizationConfig().GetScalar(); sq.GetType() != qc.QuantizationType_Int8 {
		t.Errorf("quantization = %v, want scalar int8", info.GetConfig().GetQuantizationConfig())
	}
	schema := info.GetPayloadSchema()
	for _, f := range []string{"tenant", "source", "doc_id", "content_type"} {
		if schema[f].GetDataType() != qc.PayloadSchemaType_Keyword {
			t.Errorf("payload schema of %s = %v, want keyword", f, schema[f])
		}
	}
	if !schema["tenant"].GetParams().GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("tenant index = %v, want is_tenant", schema["tenant"])
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	srv := qdranttest.Start(t)
	admin, err := qc.NewClient(&qc.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	settingsRoundTrip(t, fakeConfig(srv, "roundtrip", 8), admin)
}

// TestLiveSettings runs the same check against a real Qdrant, on a fresh
// collection deleted afterwards:
//
//	QDRANT_URL=qdrant://localhost:6334 go test -run LiveSettings -v ./retrieval/qdrant/
func TestLiveSettings(t *testing.T) {
	url := os.Getenv("QDRANT_URL")
	if url == "" {
		t.Skip("QDRANT_URL not set: skipping the live Qdrant check (e.g. QDRANT_URL=qdrant://localhost:6334)")
	}
	cfg, err := qdrant.ParseURL(url)
	if err != nil {
		t.Fatalf("QDRANT_URL: %v", err)
	}
	admin, err := qc.NewClient(&qc.Config{Host: cfg.Host, Port: cfg.Port, APIKey: cfg.APIKey, UseTLS: cfg.UseTLS,
		PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cfg.Collection, cfg.Dim = "adaptrag_settings_"+randomSuffix(t), 8
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := admin.DeleteCollection(ctx, cfg.Collection); err != nil {
			t.Errorf("delete collection %s: %v", cfg.Collection, err)
		}
	})
	settingsRoundTrip(t, cfg, admin)
}
