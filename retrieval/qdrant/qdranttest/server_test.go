package qdranttest_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// setup starts a server, connects the real client and creates collection
// "c" with a 2-d cosine vector "d" and an IDF sparse vector "s".
func setup(t *testing.T) (*qdranttest.Server, *qdrant.Client) {
	t.Helper()
	srv := qdranttest.Start(t)
	cl, err := qdrant.NewClient(&qdrant.Config{Host: srv.Host(), Port: srv.Port(), PoolSize: 1, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	err = cl.CreateCollection(context.Background(), &qdrant.CreateCollection{
		CollectionName: "c",
		VectorsConfig:  qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"d": {Size: 2, Distance: qdrant.Distance_Cosine}}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			"s": {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, cl
}

type pt struct {
	id      uint64
	dense   []float32
	idx     []uint32
	val     []float32
	payload map[string]any
}

func upsert(t *testing.T, cl *qdrant.Client, pts ...pt) {
	t.Helper()
	var ps []*qdrant.PointStruct
	for _, p := range pts {
		vecs := map[string]*qdrant.Vector{}
		if p.dense != nil {
			vecs["d"] = qdrant.NewVectorDense(p.dense)
		}
		if p.idx != nil {
			vecs["s"] = qdrant.NewVectorSparse(p.idx, p.val)
		}
		ps = append(ps, &qdrant.PointStruct{Id: qdrant.NewIDNum(p.id), Vectors: qdrant.NewVectorsMap(vecs), Payload: qdrant.NewValueMap(p.payload)})
	}
	if _, err := cl.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: "c", Points: ps, Wait: qdrant.PtrOf(true)}); err != nil {
		t.Fatal(err)
	}
}

func query(t *testing.T, cl *qdrant.Client, q *qdrant.QueryPoints) []*qdrant.ScoredPoint {
	t.Helper()
	q.CollectionName = "c"
	res, err := cl.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	return res
}

func ids(res []*qdrant.ScoredPoint) []uint64 {
	out := make([]uint64, len(res))
	for i, r := range res {
		out[i] = r.GetId().GetNum()
	}
	return out
}

func TestDenseCosine(t *testing.T) {
	_, cl := setup(t)
	upsert(t, cl, pt{id: 1, dense: []float32{3, 0}}, pt{id: 2, dense: []float32{1, 1}}, pt{id: 3, dense: []float32{0, 5}})
	res := query(t, cl, &qdrant.QueryPoints{Query: qdrant.NewQueryDense([]float32{2, 0}), Using: qdrant.PtrOf("d")})
	if got := ids(res); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("order = %v, want [1 2 3]", got)
	}
	want := []float64{1, 1 / math.Sqrt2, 0}
	for i, r := range res {
		if math.Abs(float64(r.GetScore())-want[i]) > 1e-6 {
			t.Errorf("point %d score %v, want cosine %v", r.GetId().GetNum(), r.GetScore(), want[i])
		}
	}
	if res[0].GetPayload() != nil {
		t.Errorf("payload returned without with_payload: %v", res[0].GetPayload())
	}
}

// TestSparseIDF checks Qdrant's IDF modifier: each query weight times
// ln(1 + (N - n + 0.5)/(n + 0.5)), N counting points with a sparse vector.
func TestSparseIDF(t *testing.T) {
	_, cl := setup(t)
	upsert(t, cl,
		pt{id: 1, idx: []uint32{7, 8}, val: []float32{2, 1}},
		pt{id: 2, idx: []uint32{7}, val: []float32{1}},
		pt{id: 3, idx: []uint32{9}, val: []float32{1}},
		pt{id: 4, dense: []float32{1, 0}}, // no sparse vector: not in N
	)
	res := query(t, cl, &qdrant.QueryPoints{Query: qdrant.NewQuerySparse([]uint32{7, 8}, []float32{1, 1}), Using: qdrant.PtrOf("s")})
	idf := func(n float64) float64 { return math.Log(1 + (3-n+0.5)/(n+0.5)) }
	want := map[uint64]float64{1: 2*idf(2) + idf(1), 2: idf(2)}
	if len(res) != 2 {
		t.Fatalf("got %v, want points 1 and 2 only (3 shares no dimension)", ids(res))
	}
	for _, r := range res {
		if w := want[r.GetId().GetNum()]; math.Abs(float64(r.GetScore())-w) > 1e-5 {
			t.Errorf("point %d score %v, want %v", r.GetId().GetNum(), r.GetScore(), w)
		}
	}
}

func TestPrefetchFusion(t *testing.T) {
	srv, cl := setup(t)
	var pts []pt
	for i := range 15 {
		pts = append(pts, pt{id: uint64(i + 1), dense: []float32{1, float32(i)}, idx: []uint32{1}, val: []float32{float32(15 - i)},
			payload: map[string]any{"grp": []string{"odd", "even"}[i%2]}})
	}
	upsert(t, cl, pts...)
	dense := &qdrant.PrefetchQuery{Query: qdrant.NewQueryDense([]float32{1, 0}), Using: qdrant.PtrOf("d")}
	sparse := &qdrant.PrefetchQuery{Query: qdrant.NewQuerySparse([]uint32{1}, []float32{1}), Using: qdrant.PtrOf("s")}

	// Both legs rank 1, 2, 3, ... so fusion keeps that order; each leg stops
	// at the default limit of 10, and so does the fused result.
	res := query(t, cl, &qdrant.QueryPoints{Prefetch: []*qdrant.PrefetchQuery{dense, sparse}, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: qdrant.PtrOf(uint64(100))})
	if got := ids(res); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("fused ids = %v, want 1..10 (prefetch default limit 10)", got)
	}
	if res[0].GetScore() != 1 { // 1/(0+2) twice
		t.Errorf("top fused score = %v, want 1", res[0].GetScore())
	}

	// Rrf with k = 61 scores rank 0 in both legs 2/61.
	res = query(t, cl, &qdrant.QueryPoints{Prefetch: []*qdrant.PrefetchQuery{dense, sparse}, Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(61))}), Limit: qdrant.PtrOf(uint64(1))})
	if len(res) != 1 || res[0].GetScore() != float32(1)/61+float32(1)/61 {
		t.Errorf("Rrf k=61 = %v, want one point scoring 2/61", res)
	}

	// The root filter reaches into the prefetches: only even-group points,
	// ranked among themselves.
	res = query(t, cl, &qdrant.QueryPoints{
		Prefetch: []*qdrant.PrefetchQuery{dense, sparse}, Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("grp", "even")}},
		Limit:  qdrant.PtrOf(uint64(3)),
	})
	if got := ids(res); !slices.Equal(got, []uint64{2, 4, 6}) {
		t.Errorf("filtered fused ids = %v, want [2 4 6]", got)
	}
	if q := srv.Queries(); len(q) != 3 || len(q[2].GetPrefetch()) != 2 {
		t.Errorf("recorded %d queries, want 3 with the last having 2 prefetches", len(q))
	}
}

func TestFilters(t *testing.T) {
	_, cl := setup(t)
	upsert(t, cl,
		pt{id: 1, dense: []float32{1, 0}, payload: map[string]any{"k": "a", "tags": []any{"x", "y"}, "m": map[string]any{"lang": "en"}}},
		pt{id: 2, dense: []float32{1, 0}, payload: map[string]any{"k": "b", "tags": []any{"y"}, "n": 3}},
		pt{id: 3, dense: []float32{1, 0}, payload: map[string]any{"k": "c", "m": map[string]any{"lang": "de"}}},
	)
	cases := []struct {
		name string
		f    *qdrant.Filter
		want []uint64
	}{
		{"keyword", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("k", "b")}}, []uint64{2}},
		{"keywords any", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("k", "a", "c")}}, []uint64{1, 3}},
		{"array element", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tags", "y")}}, []uint64{1, 2}},
		{"nested path", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("m.lang", "de")}}, []uint64{3}},
		{"integer", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("n", 3)}}, []uint64{2}},
		{"must_not", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchKeyword("k", "a")}}, []uint64{2, 3}},
		{"should", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchKeyword("k", "a"), qdrant.NewMatchKeyword("k", "c")}}, []uint64{1, 3}},
		{"is_empty", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsEmpty("tags")}}, []uint64{3}},
		{"has_id", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(2))}}, []uint64{2}},
		{"nested filter", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(&qdrant.Filter{
			Should: []*qdrant.Condition{qdrant.NewMatchKeyword("m.lang", "en"), qdrant.NewIsEmpty("m.lang")}})}}, []uint64{1, 2}},
	}
	for _, tc := range cases {
		got := ids(query(t, cl, &qdrant.QueryPoints{Query: qdrant.NewQueryDense([]float32{1, 0}), Using: qdrant.PtrOf("d"), Filter: tc.f}))
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Deleting by filter removes exactly the matching points.
	_, err := cl.Delete(context.Background(), &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true),
		Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tags", "y")}})})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(query(t, cl, &qdrant.QueryPoints{Query: qdrant.NewQueryDense([]float32{1, 0}), Using: qdrant.PtrOf("d")})); !slices.Equal(got, []uint64{3}) {
		t.Errorf("after delete by filter: %v, want [3]", got)
	}
}

func TestErrors(t *testing.T) {
	_, cl := setup(t)
	ctx := context.Background()
	check := func(name string, err error, want codes.Code) {
		t.Helper()
		if got := status.Code(err); got != want {
			t.Errorf("%s: code %v (%v), want %v", name, got, err, want)
		}
	}
	_, err := cl.Query(ctx, &qdrant.QueryPoints{CollectionName: "nope", Query: qdrant.NewQueryDense([]float32{1, 0})})
	check("missing collection", err, codes.NotFound)
	_, err = cl.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQueryDense([]float32{1, 0, 0}), Using: qdrant.PtrOf("d")})
	check("wrong dim", err, codes.InvalidArgument)
	_, err = cl.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(1),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"d": qdrant.NewVectorDense([]float32{1})})}}})
	check("upsert wrong dim", err, codes.InvalidArgument)
	_, err = cl.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQueryDense([]float32{1, 0}), Using: qdrant.PtrOf("d"),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("n", &qdrant.Range{Gt: qdrant.PtrOf(1.0)})}}})
	check("unsupported condition", err, codes.Unimplemented)
	err = cl.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})})
	check("create twice", err, codes.InvalidArgument)
}

func TestFaults(t *testing.T) {
	srv, cl := setup(t)
	srv.SetUnavailable(true)
	_, err := cl.CollectionExists(context.Background(), "c")
	if status.Code(err) != codes.Unavailable {
		t.Errorf("unavailable server: %v", err)
	}
	srv.SetUnavailable(false)
	srv.SetDelay(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = cl.CollectionExists(ctx, "c")
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("slow server with a 30ms deadline: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("call returned after %v, not at its deadline", d)
	}
}

func TestHealthCheck(t *testing.T) {
	_, cl := setup(t)
	r, err := cl.HealthCheck(context.Background())
	if err != nil || r.GetVersion() != qdranttest.Version {
		t.Errorf("HealthCheck = %v, %v; want version %s", r, err, qdranttest.Version)
	}
}

func TestScroll(t *testing.T) {
	_, cl := setup(t)
	ctx := context.Background()
	for i := range 25 {
		tag := "even"
		if i%2 == 1 {
			tag = "odd"
		}
		upsert(t, cl, pt{id: uint64(100 - i), dense: []float32{1, float32(i)}, payload: map[string]any{"tag": tag, "n": int64(i)}})
	}
	// Two UUID points: they come after every numeric id, in UUID order.
	uuids := []string{"f0000000-0000-4000-8000-000000000000", "0a000000-0000-4000-8000-000000000000"}
	for _, u := range uuids {
		_, err := cl.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{
			Id: qdrant.NewIDUUID(u), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"d": qdrant.NewVectorDense([]float32{1, 1})}),
			Payload: qdrant.NewValueMap(map[string]any{"tag": "uuid"}),
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(id *qdrant.PointId) string {
		if u := id.GetUuid(); u != "" {
			return u
		}
		return fmt.Sprint(id.GetNum())
	}
	// Paging with the default limit walks every point once, in id order.
	var got []string
	var offset *qdrant.PointId
	pages := 0
	for {
		res, next, err := cl.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res) > 10 {
			t.Fatalf("page of %d points, want the default limit 10", len(res))
		}
		for _, p := range res {
			got = append(got, key(p.GetId()))
			if p.GetPayload()["tag"] == nil {
				t.Errorf("point %s without payload: Scroll returns it by default", key(p.GetId()))
			}
		}
		if next == nil {
			break
		}
		offset = next
	}
	var want []string
	for i := 76; i <= 100; i++ {
		want = append(want, fmt.Sprint(i))
	}
	want = append(want, uuids[1], uuids[0])
	if !slices.Equal(got, want) || pages != 3 {
		t.Errorf("scrolled %v in %d pages, want %v in 3", got, pages, want)
	}
	// The offset is inclusive and need not exist; the filter applies
	// before the limit.
	res, next, err := cl.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
		CollectionName: "c", Offset: qdrant.NewIDNum(80), Limit: qdrant.PtrOf(uint32(3)),
		Filter:      &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("tag", "even")}},
		WithPayload: qdrant.NewWithPayloadInclude("n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var page []string
	for _, p := range res {
		page = append(page, key(p.GetId()))
		if _, ok := p.GetPayload()["tag"]; ok || p.GetPayload()["n"] == nil {
			t.Errorf("point %s payload %v, want only n", key(p.GetId()), p.GetPayload())
		}
	}
	// Even i means an even id here (100 - i).
	if !slices.Equal(page, []string{"80", "82", "84"}) || next.GetNum() != 86 {
		t.Errorf("filtered page = %v next %v, want [80 82 84] next 86", page, next)
	}
	res, _, err = cl.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Offset: qdrant.NewIDNum(81), Limit: qdrant.PtrOf(uint32(1)), WithPayload: qdrant.NewWithPayload(false)})
	if err != nil || len(res) != 1 || res[0].GetId().GetNum() != 81 || len(res[0].GetPayload()) != 0 {
		t.Errorf("offset 81 limit 1 without payload = %v, %v", res, err)
	}
	res, next, err = cl.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Offset: qdrant.NewIDNum(1000), Limit: qdrant.PtrOf(uint32(5))})
	if err != nil || len(res) != 2 || next != nil {
		t.Errorf("offset past the numeric ids = %d points, next %v, %v; want the 2 UUIDs and no next page", len(res), next, err)
	}
	if _, err := cl.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(0))}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("limit 0: %v, want InvalidArgument", err)
	}
	if _, err := cl.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("missing collection: %v, want NotFound", err)
	}
}

// TestFieldIndexParams: a keyword index may carry KeywordIndexParams
// (is_tenant), which Get reports back; parameters of another kind than the
// field type, or parameters without a type, are refused as by Qdrant.
func TestFieldIndexParams(t *testing.T) {
	srv, cl := setup(t)
	ctx := context.Background()
	_, err := cl.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "tenant",
		FieldType:        qdrant.FieldType_FieldTypeKeyword.Enum(),
		FieldIndexParams: qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(true)})})
	if err != nil {
		t.Fatal(err)
	}
	typ, params, ok := srv.FieldIndex("c", "tenant")
	if !ok || typ != qdrant.FieldType_FieldTypeKeyword || !params.GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("FieldIndex = %v, %v, %v; want a keyword index with is_tenant", typ, params, ok)
	}
	info, err := cl.GetCollectionInfo(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	ps := info.GetPayloadSchema()["tenant"]
	if ps.GetDataType() != qdrant.PayloadSchemaType_Keyword || !ps.GetParams().GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("payload schema of tenant = %v, want keyword with is_tenant", ps)
	}
	// Without params, the index has none.
	if _, err := cl.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "src",
		FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()}); err != nil {
		t.Fatal(err)
	}
	if _, params, ok := srv.FieldIndex("c", "src"); !ok || params != nil {
		t.Errorf("plain keyword index: params = %v, %v; want nil, true", params, ok)
	}
	for name, req := range map[string]*qdrant.CreateFieldIndexCollection{
		"keyword params on an integer field": {FieldName: "n", FieldType: qdrant.FieldType_FieldTypeInteger.Enum(),
			FieldIndexParams: qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(true)})},
		"params without a field type": {FieldName: "n",
			FieldIndexParams: qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{})},
		"empty field name": {FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()},
	} {
		req.CollectionName = "c"
		if _, err := cl.CreateFieldIndex(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
	if _, _, ok := srv.FieldIndex("c", "n"); ok {
		t.Error("a refused index was recorded")
	}
}

// TestCollectionSettings: sharding, replication, on-disk, HNSW and
// quantization settings are validated, recorded and reported by Get.
func TestCollectionSettings(t *testing.T) {
	srv, cl := setup(t)
	ctx := context.Background()
	vectors := func(onDisk bool) *qdrant.VectorsConfig {
		return qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"d": {Size: 4, Distance: qdrant.Distance_Cosine, OnDisk: qdrant.PtrOf(onDisk)}})
	}
	req := &qdrant.CreateCollection{
		CollectionName: "big", VectorsConfig: vectors(true),
		ShardNumber: qdrant.PtrOf(uint32(6)), ReplicationFactor: qdrant.PtrOf(uint32(2)), WriteConsistencyFactor: qdrant.PtrOf(uint32(2)),
		OnDiskPayload: qdrant.PtrOf(true),
		HnswConfig:    &qdrant.HnswConfigDiff{M: qdrant.PtrOf(uint64(0)), PayloadM: qdrant.PtrOf(uint64(16)), EfConstruct: qdrant.PtrOf(uint64(200))},
		QuantizationConfig: qdrant.NewQuantizationScalar(&qdrant.ScalarQuantization{Type: qdrant.QuantizationType_Int8,
			Quantile: qdrant.PtrOf(float32(0.99)), AlwaysRam: qdrant.PtrOf(true)}),
	}
	if err := cl.CreateCollection(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := srv.Created("big")
	if got.GetShardNumber() != 6 || got.GetReplicationFactor() != 2 || got.GetWriteConsistencyFactor() != 2 || !got.GetOnDiskPayload() ||
		got.GetHnswConfig().GetPayloadM() != 16 || got.GetQuantizationConfig().GetScalar().GetType() != qdrant.QuantizationType_Int8 {
		t.Errorf("Created = %v", got)
	}
	info, err := cl.GetCollectionInfo(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	p := info.GetConfig().GetParams()
	if p.GetShardNumber() != 6 || p.GetReplicationFactor() != 2 || p.GetWriteConsistencyFactor() != 2 || !p.GetOnDiskPayload() {
		t.Errorf("params = %v", p)
	}
	if h := info.GetConfig().GetHnswConfig(); h.GetM() != 0 || h.GetPayloadM() != 16 || h.GetEfConstruct() != 200 || h.GetFullScanThreshold() != 10000 {
		t.Errorf("hnsw = %v, want m 0, payload_m 16, ef_construct 200 and the default full_scan_threshold", h)
	}
	if !p.GetVectorsConfig().GetParamsMap().GetMap()["d"].GetOnDisk() {
		t.Error("on_disk of the dense vector not reported")
	}
	// Defaults are reported where the request set nothing.
	info, err = cl.GetCollectionInfo(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if p := info.GetConfig().GetParams(); p.GetShardNumber() != 1 || p.GetReplicationFactor() != 1 || info.GetConfig().GetHnswConfig().GetM() != 16 {
		t.Errorf("defaults = %v", info.GetConfig())
	}
	if srv.Created("never") != nil {
		t.Error("Created of an unknown collection is not nil")
	}

	bad := map[string]func(r *qdrant.CreateCollection){
		"shard_number 0":       func(r *qdrant.CreateCollection) { r.ShardNumber = qdrant.PtrOf(uint32(0)) },
		"replication_factor 0": func(r *qdrant.CreateCollection) { r.ReplicationFactor = qdrant.PtrOf(uint32(0)) },
		"write_consistency 0":  func(r *qdrant.CreateCollection) { r.WriteConsistencyFactor = qdrant.PtrOf(uint32(0)) },
		"ef_construct 3": func(r *qdrant.CreateCollection) {
			r.HnswConfig = &qdrant.HnswConfigDiff{EfConstruct: qdrant.PtrOf(uint64(3))}
		},
		"quantile 0.4": func(r *qdrant.CreateCollection) {
			r.QuantizationConfig.GetScalar().Quantile = qdrant.PtrOf(float32(0.4))
		},
		"vector size over 65536": func(r *qdrant.CreateCollection) { r.VectorsConfig.GetParamsMap().GetMap()["d"].Size = 65537 },
	}
	for name, mutate := range bad {
		r := &qdrant.CreateCollection{CollectionName: "bad", VectorsConfig: vectors(false),
			QuantizationConfig: qdrant.NewQuantizationScalar(&qdrant.ScalarQuantization{Type: qdrant.QuantizationType_Int8})}
		mutate(r)
		if err := cl.CreateCollection(ctx, r); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
	if ok, _ := cl.CollectionExists(ctx, "bad"); ok {
		t.Error("a refused collection exists")
	}
}

// TestFailNext: the next n calls of one method fail with the injected
// code, other methods are untouched, and Calls counts every call.
func TestFailNext(t *testing.T) {
	srv, cl := setup(t)
	ctx := context.Background()
	srv.FailNext("Upsert", codes.Unavailable, 2)
	srv.FailNext("Upsert", codes.ResourceExhausted, 1)
	up := &qdrant.UpsertPoints{CollectionName: "c", Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"d": qdrant.NewVectorDense([]float32{1, 0})})}}}
	for i, want := range []codes.Code{codes.Unavailable, codes.Unavailable, codes.ResourceExhausted, codes.OK} {
		if _, err := cl.Upsert(ctx, up); status.Code(err) != want {
			t.Errorf("upsert %d: %v, want %v", i, err, want)
		}
		if i == 0 {
			// Another method is not affected.
			if _, err := cl.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil {
				t.Errorf("count during upsert faults: %v", err)
			}
		}
	}
	if n, err := cl.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil || n != 1 {
		t.Errorf("count = %d, %v; want 1 point (failed upserts apply nothing)", n, err)
	}
	if got := srv.Calls("Upsert"); got != 4 {
		t.Errorf("Calls(Upsert) = %d, want 4", got)
	}
	if got := srv.Calls("Count"); got != 2 {
		t.Errorf("Calls(Count) = %d, want 2", got)
	}
}

// TestSparseIDFAfterWrites: the document frequencies behind IDF follow
// replacements and deletes (by id and by filter).
func TestSparseIDFAfterWrites(t *testing.T) {
	_, cl := setup(t)
	ctx := context.Background()
	upsert(t, cl,
		pt{id: 1, idx: []uint32{7}, val: []float32{1}},
		pt{id: 2, idx: []uint32{7}, val: []float32{1}},
		pt{id: 3, idx: []uint32{7, 8}, val: []float32{1, 1}, payload: map[string]any{"k": "x"}},
		pt{id: 4, idx: []uint32{9}, val: []float32{1}},
		pt{id: 5, idx: []uint32{9}, val: []float32{1}},
	)
	upsert(t, cl, pt{id: 1, idx: []uint32{9}, val: []float32{1}}) // 1 leaves dimension 7
	if _, err := cl.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true),
		Points: qdrant.NewPointsSelector(qdrant.NewIDNum(4))}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Wait: qdrant.PtrOf(true),
		Points: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("k", "x")}})}); err != nil {
		t.Fatal(err)
	}
	// Left: 1 {9}, 2 {7}, 5 {9}: N = 3, n(7) = 1, n(9) = 2.
	idf := func(n float64) float64 { return math.Log(1 + (3-n+0.5)/(n+0.5)) }
	res := query(t, cl, &qdrant.QueryPoints{Query: qdrant.NewQuerySparse([]uint32{7, 9}, []float32{1, 1}), Using: qdrant.PtrOf("s")})
	want := map[uint64]float64{1: idf(2), 2: idf(1), 5: idf(2)}
	if len(res) != 3 {
		t.Fatalf("got %v, want points 1, 2 and 5", ids(res))
	}
	for _, r := range res {
		if w := want[r.GetId().GetNum()]; math.Abs(float64(r.GetScore())-w) > 1e-5 {
			t.Errorf("point %d score %v, want %v", r.GetId().GetNum(), r.GetScore(), w)
		}
	}
}
