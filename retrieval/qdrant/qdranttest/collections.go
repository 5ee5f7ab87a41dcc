package qdranttest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// collection is the state of one fake collection. It is guarded by Server.mu.
type collection struct {
	name    string
	dense   map[string]*qdrant.VectorParams       // named dense vectors ("" for the unnamed default)
	sparse  map[string]*qdrant.SparseVectorParams // named sparse vectors
	indexes map[string]fieldIndex
	points  map[string]*point        // by idKey
	params  *qdrant.CreateCollection // the settings it was created with

	// Document frequencies of the sparse vectors, kept up to date by put
	// and remove so that a search with the IDF modifier need not count
	// them over every point: vector name -> dimension -> points having it,
	// and vector name -> points having that vector.
	df      map[string]map[uint32]int
	nsparse map[string]int
}

// put stores p, replacing the point with its id.
func (c *collection) put(p *point) {
	c.remove(p.key)
	c.points[p.key] = p
	for name, sv := range p.sparse {
		c.nsparse[name]++
		m := c.df[name]
		if m == nil {
			m = make(map[uint32]int)
			c.df[name] = m
		}
		for ix := range sv {
			m[ix]++
		}
	}
}

// remove deletes the point with key, if there is one.
func (c *collection) remove(key string) {
	old := c.points[key]
	if old == nil {
		return
	}
	delete(c.points, key)
	for name, sv := range old.sparse {
		c.nsparse[name]--
		m := c.df[name]
		for ix := range sv {
			if m[ix]--; m[ix] == 0 {
				delete(m, ix)
			}
		}
	}
}

// fieldIndex is a payload index as CreateFieldIndex declared it.
type fieldIndex struct {
	typ    qdrant.FieldType
	params *qdrant.PayloadIndexParams // nil: the type's defaults
}

// point is a stored point. Dense vectors of Cosine spaces are stored
// normalised, as Qdrant does at insertion.
type point struct {
	id      *qdrant.PointId
	key     string
	payload map[string]*qdrant.Value
	dense   map[string][]float32
	sparse  map[string]sparseVec
}

// sparseVec is a sparse vector as index -> value.
type sparseVec map[uint32]float32

// idKey renders a point id in a form that sorts numeric ids before UUIDs and
// is unique per id.
func idKey(id *qdrant.PointId) (string, error) {
	switch v := id.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return fmt.Sprintf("0:%020d", v.Num), nil
	case *qdrant.PointId_Uuid:
		u, ok := canonicalUUID(v.Uuid)
		if !ok {
			//lint:ignore ST1005 Qdrant's own wording, which clients may match on
			return "", fmt.Errorf("Unable to parse UUID: %s", v.Uuid)
		}
		return "1:" + u, nil
	}
	return "", fmt.Errorf("point id is missing")
}

// canonicalUUID accepts a hyphenated or plain 32-hex-digit UUID and returns
// its lower-case hyphenated form, as Qdrant echoes ids back.
func canonicalUUID(s string) (string, bool) {
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	if len(h) != 32 {
		return "", false
	}
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", false
		}
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "Wrong input: "+format, args...)
}

// get returns the collection or a NotFound status. Callers hold s.mu.
func (s *Server) get(name string) (*collection, error) {
	c := s.collections[name]
	if c == nil {
		return nil, notFound(name)
	}
	return c, nil
}

type collectionsService struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

func (cs collectionsService) Create(_ context.Context, req *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	s := cs.s
	name := req.GetCollectionName()
	if name == "" {
		return nil, invalid("collection name must not be empty")
	}
	c := &collection{
		name:    name,
		dense:   make(map[string]*qdrant.VectorParams),
		sparse:  make(map[string]*qdrant.SparseVectorParams),
		indexes: make(map[string]fieldIndex),
		points:  make(map[string]*point),
		df:      make(map[string]map[uint32]int),
		nsparse: make(map[string]int),
		params:  proto.Clone(req).(*qdrant.CreateCollection),
	}
	if err := checkCollectionSettings(req); err != nil {
		return nil, err
	}
	switch v := req.GetVectorsConfig().GetConfig().(type) {
	case *qdrant.VectorsConfig_Params:
		c.dense[""] = proto.Clone(v.Params).(*qdrant.VectorParams)
	case *qdrant.VectorsConfig_ParamsMap:
		for n, p := range v.ParamsMap.GetMap() {
			c.dense[n] = proto.Clone(p).(*qdrant.VectorParams)
		}
	}
	for n, p := range c.dense {
		if p.GetSize() == 0 || p.GetSize() > 65536 {
			return nil, invalid("Validation error in body: [vectors_config.%s.size: value %d invalid, must be from 1 to 65536]", n, p.GetSize())
		}
		if err := checkHNSW("vectors_config."+n+".hnsw_config", p.HnswConfig); err != nil {
			return nil, err
		}
		if err := checkQuantization("vectors_config."+n+".quantization_config", p.QuantizationConfig); err != nil {
			return nil, err
		}
		switch p.GetDistance() {
		case qdrant.Distance_Cosine, qdrant.Distance_Dot:
		default:
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: distance %v", p.GetDistance())
		}
	}
	for n, p := range req.GetSparseVectorsConfig().GetMap() {
		c.sparse[n] = proto.Clone(p).(*qdrant.SparseVectorParams)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.collections[name] != nil {
		return nil, invalid("Collection `%s` already exists!", name)
	}
	s.collections[name] = c
	s.logMu.Lock()
	s.created[name] = proto.Clone(req).(*qdrant.CreateCollection)
	s.logMu.Unlock()
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

// checkCollectionSettings applies Qdrant's validation of the collection
// level settings of a Create request.
func checkCollectionSettings(req *qdrant.CreateCollection) error {
	for _, f := range []struct {
		name string
		v    *uint32
	}{
		{"shard_number", req.ShardNumber},
		{"replication_factor", req.ReplicationFactor},
		{"write_consistency_factor", req.WriteConsistencyFactor},
	} {
		if f.v != nil && *f.v < 1 {
			return invalid("Validation error in body: [%s: value 0 invalid, must be 1 or larger]", f.name)
		}
	}
	if req.ShardingMethod != nil && *req.ShardingMethod != qdrant.ShardingMethod_Auto {
		// Custom sharding needs shard keys on every write and read: not in
		// the subset.
		return status.Error(codes.Unimplemented, "qdranttest: custom sharding")
	}
	if err := checkHNSW("hnsw_config", req.HnswConfig); err != nil {
		return err
	}
	return checkQuantization("quantization_config", req.QuantizationConfig)
}

func checkHNSW(where string, h *qdrant.HnswConfigDiff) error {
	if h != nil && h.EfConstruct != nil && *h.EfConstruct < 4 {
		return invalid("Validation error in body: [%s.ef_construct: value %d invalid, must be 4 or larger]", where, *h.EfConstruct)
	}
	return nil
}

func checkQuantization(where string, q *qdrant.QuantizationConfig) error {
	if q == nil {
		return nil
	}
	sq := q.GetScalar()
	if sq == nil {
		return status.Errorf(codes.Unimplemented, "qdranttest: quantization %T", q.GetQuantization())
	}
	if sq.GetType() != qdrant.QuantizationType_Int8 {
		return invalid("Validation error in body: [%s.scalar.type: unknown quantization type %v]", where, sq.GetType())
	}
	if sq.Quantile != nil && (*sq.Quantile < 0.5 || *sq.Quantile > 1) {
		return invalid("Validation error in body: [%s.scalar.quantile: value %v invalid, must be in the range 0.5..=1]", where, *sq.Quantile)
	}
	return nil
}

func (cs collectionsService) CollectionExists(_ context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	cs.s.mu.RLock()
	defer cs.s.mu.RUnlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

func (cs collectionsService) Get(_ context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	s := cs.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	// Qdrant reports the effective settings: its defaults where the Create
	// request left a setting out (a standalone node's shard_number is 1).
	one := func(v *uint32) *uint32 {
		if v == nil {
			return qdrant.PtrOf(uint32(1))
		}
		return qdrant.PtrOf(*v)
	}
	params := &qdrant.CollectionParams{
		ShardNumber:            *one(c.params.ShardNumber),
		ReplicationFactor:      one(c.params.ReplicationFactor),
		WriteConsistencyFactor: one(c.params.WriteConsistencyFactor),
		OnDiskPayload:          c.params.GetOnDiskPayload(),
		ShardingMethod:         qdrant.ShardingMethod_Auto.Enum(),
	}
	hnsw := &qdrant.HnswConfigDiff{M: qdrant.PtrOf(uint64(16)), EfConstruct: qdrant.PtrOf(uint64(100)),
		FullScanThreshold: qdrant.PtrOf(uint64(10000)), OnDisk: qdrant.PtrOf(false)}
	if h := c.params.HnswConfig; h != nil {
		proto.Merge(hnsw, h)
	}
	if p, ok := c.dense[""]; ok && len(c.dense) == 1 {
		params.VectorsConfig = qdrant.NewVectorsConfig(proto.Clone(p).(*qdrant.VectorParams))
	} else if len(c.dense) > 0 {
		m := make(map[string]*qdrant.VectorParams, len(c.dense))
		for n, p := range c.dense {
			m[n] = proto.Clone(p).(*qdrant.VectorParams)
		}
		params.VectorsConfig = qdrant.NewVectorsConfigMap(m)
	}
	if len(c.sparse) > 0 {
		m := make(map[string]*qdrant.SparseVectorParams, len(c.sparse))
		for n, p := range c.sparse {
			m[n] = proto.Clone(p).(*qdrant.SparseVectorParams)
		}
		params.SparseVectorsConfig = qdrant.NewSparseVectorsConfig(m)
	}
	schema := make(map[string]*qdrant.PayloadSchemaInfo, len(c.indexes))
	for f, ix := range c.indexes {
		// FieldType counts from Keyword = 0, PayloadSchemaType from Unknown = 0.
		info := &qdrant.PayloadSchemaInfo{DataType: qdrant.PayloadSchemaType(ix.typ + 1)}
		if ix.params != nil {
			info.Params = proto.Clone(ix.params).(*qdrant.PayloadIndexParams)
		}
		schema[f] = info
	}
	n := uint64(len(c.points))
	cfg := &qdrant.CollectionConfig{Params: params, HnswConfig: hnsw}
	if q := c.params.QuantizationConfig; q != nil {
		cfg.QuantizationConfig = proto.Clone(q).(*qdrant.QuantizationConfig)
	}
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:        qdrant.CollectionStatus_Green,
		Config:        cfg,
		PayloadSchema: schema,
		PointsCount:   &n,
	}}, nil
}

func (cs collectionsService) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	cs.s.mu.RLock()
	defer cs.s.mu.RUnlock()
	resp := &qdrant.ListCollectionsResponse{}
	for _, n := range slices.Sorted(maps.Keys(cs.s.collections)) {
		resp.Collections = append(resp.Collections, &qdrant.CollectionDescription{Name: n})
	}
	return resp, nil
}

func (cs collectionsService) Delete(_ context.Context, req *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	delete(cs.s.collections, req.GetCollectionName())
	// Qdrant answers false, not an error, for a collection that was not there.
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}
