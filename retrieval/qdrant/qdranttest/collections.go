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
	indexes map[string]qdrant.FieldType
	points  map[string]*point // by idKey
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
		indexes: make(map[string]qdrant.FieldType),
		points:  make(map[string]*point),
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
		if p.GetSize() == 0 {
			return nil, invalid("vector %q: size must be greater than 0", n)
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
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (cs collectionsService) CollectionExists(_ context.Context, req *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.collections[req.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

func (cs collectionsService) Get(_ context.Context, req *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	s := cs.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	params := &qdrant.CollectionParams{ShardNumber: 1}
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
	for f, t := range c.indexes {
		// FieldType counts from Keyword = 0, PayloadSchemaType from Unknown = 0.
		schema[f] = &qdrant.PayloadSchemaInfo{DataType: qdrant.PayloadSchemaType(t + 1)}
	}
	n := uint64(len(c.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:        qdrant.CollectionStatus_Green,
		Config:        &qdrant.CollectionConfig{Params: params},
		PayloadSchema: schema,
		PointsCount:   &n,
	}}, nil
}

func (cs collectionsService) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
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
