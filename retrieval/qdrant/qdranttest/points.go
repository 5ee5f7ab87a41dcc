package qdranttest

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

type pointsService struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

func completed() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

func (ps pointsService) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	s := ps.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	// Validate the whole batch before applying any of it: Qdrant rejects a
	// request with one bad point as a whole.
	pts := make([]*point, 0, len(req.GetPoints()))
	for _, ps := range req.GetPoints() {
		p, err := c.newPoint(ps)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	for _, p := range pts {
		c.put(p)
	}
	return completed(), nil
}

// newPoint validates and converts an incoming point.
func (c *collection) newPoint(ps *qdrant.PointStruct) (*point, error) {
	key, err := idKey(ps.GetId())
	if err != nil {
		return nil, invalid("%v", err)
	}
	p := &point{
		id:      proto.Clone(ps.GetId()).(*qdrant.PointId),
		key:     key,
		payload: clonePayload(ps.GetPayload()),
		dense:   make(map[string][]float32),
		sparse:  make(map[string]sparseVec),
	}
	if u := ps.GetId().GetUuid(); u != "" {
		cu, _ := canonicalUUID(u)
		p.id = qdrant.NewIDUUID(cu)
	}
	vecs := map[string]*qdrant.Vector{}
	switch v := ps.GetVectors().GetVectorsOptions().(type) {
	case *qdrant.Vectors_Vector:
		vecs[""] = v.Vector
	case *qdrant.Vectors_Vectors:
		vecs = v.Vectors.GetVectors()
	}
	for name, v := range vecs {
		if err := c.addVector(p, name, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (c *collection) addVector(p *point, name string, v *qdrant.Vector) error {
	var (
		dense  []float32
		sparse *qdrant.SparseVector
	)
	switch x := v.GetVector().(type) {
	case *qdrant.Vector_Dense:
		dense = x.Dense.GetData()
	case *qdrant.Vector_Sparse:
		sparse = x.Sparse
	case nil:
		// The deprecated flat encoding (Data, plus Indices for sparse),
		// which older clients still send.
		//lint:ignore SA1019 the fake accepts the deprecated encoding older clients send
		if idx := v.GetIndices(); idx != nil {
			sparse = &qdrant.SparseVector{Indices: idx.GetData(), Values: v.GetData()} //lint:ignore SA1019 as above
		} else {
			dense = v.GetData() //lint:ignore SA1019 as above
		}
	default:
		return status.Errorf(codes.Unimplemented, "qdranttest: vector kind %T", x)
	}
	if sparse != nil {
		if _, ok := c.sparse[name]; !ok {
			return invalid("Not existing vector name error: %s", name)
		}
		sv, err := toSparse(sparse)
		if err != nil {
			return err
		}
		p.sparse[name] = sv
		return nil
	}
	params, ok := c.dense[name]
	if !ok {
		return invalid("Not existing vector name error: %s", name)
	}
	if uint64(len(dense)) != params.GetSize() {
		return invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(dense))
	}
	d := append([]float32(nil), dense...)
	if params.GetDistance() == qdrant.Distance_Cosine {
		normalize(d)
	}
	p.dense[name] = d
	return nil
}

func toSparse(v *qdrant.SparseVector) (sparseVec, error) {
	if len(v.GetIndices()) != len(v.GetValues()) {
		return nil, invalid("Sparse vector indices and values must have the same length: %d != %d",
			len(v.GetIndices()), len(v.GetValues()))
	}
	sv := make(sparseVec, len(v.GetIndices()))
	for i, ix := range v.GetIndices() {
		if _, dup := sv[ix]; dup {
			return nil, invalid("Sparse vector indices must be unique: %d is repeated", ix)
		}
		sv[ix] = v.GetValues()[i]
	}
	return sv, nil
}

func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}

func clonePayload(p map[string]*qdrant.Value) map[string]*qdrant.Value {
	out := make(map[string]*qdrant.Value, len(p))
	for k, v := range p {
		out[k] = proto.Clone(v).(*qdrant.Value)
	}
	return out
}

func (ps pointsService) Delete(_ context.Context, req *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	s := ps.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	switch sel := req.GetPoints().GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		for _, id := range sel.Points.GetIds() {
			key, err := idKey(id)
			if err != nil {
				return nil, invalid("%v", err)
			}
			c.remove(key)
		}
	case *qdrant.PointsSelector_Filter:
		if err := checkFilter(sel.Filter); err != nil {
			return nil, err
		}
		for k, p := range c.points {
			if matchFilter(sel.Filter, p) {
				c.remove(k)
			}
		}
	default:
		return nil, invalid("points selector is missing")
	}
	return completed(), nil
}

func (ps pointsService) CreateFieldIndex(_ context.Context, req *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	s := ps.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if req.GetFieldName() == "" {
		return nil, invalid("Validation error in body: [field_name: must not be empty]")
	}
	ix, err := checkFieldIndex(req)
	if err != nil {
		return nil, err
	}
	// Creating an index on an indexed field replaces it, as in Qdrant
	// (which rebuilds it with the new schema).
	c.indexes[req.GetFieldName()] = ix
	return completed(), nil
}

// checkFieldIndex applies Qdrant's rules to a CreateFieldIndex request: the
// field type is required when index parameters are given, and the kind of
// the parameters must be the field type's (KeywordIndexParams for a
// keyword field, and so on). A request without a type is accepted by
// Qdrant, which then infers the type from the stored payload; the fake
// infers nothing and refuses it.
func checkFieldIndex(req *qdrant.CreateFieldIndexCollection) (fieldIndex, error) {
	params := req.GetFieldIndexParams()
	if params.GetIndexParams() == nil {
		params = nil
	}
	if req.FieldType == nil {
		if params != nil {
			return fieldIndex{}, invalid("field type is missing")
		}
		return fieldIndex{}, status.Error(codes.Unimplemented, "qdranttest: a field index without a field type (inferred from the payload by Qdrant)")
	}
	t := req.GetFieldType()
	if params != nil {
		var want qdrant.FieldType
		switch params.GetIndexParams().(type) {
		case *qdrant.PayloadIndexParams_KeywordIndexParams:
			want = qdrant.FieldType_FieldTypeKeyword
		case *qdrant.PayloadIndexParams_IntegerIndexParams:
			want = qdrant.FieldType_FieldTypeInteger
		case *qdrant.PayloadIndexParams_FloatIndexParams:
			want = qdrant.FieldType_FieldTypeFloat
		case *qdrant.PayloadIndexParams_GeoIndexParams:
			want = qdrant.FieldType_FieldTypeGeo
		case *qdrant.PayloadIndexParams_TextIndexParams:
			want = qdrant.FieldType_FieldTypeText
		case *qdrant.PayloadIndexParams_BoolIndexParams:
			want = qdrant.FieldType_FieldTypeBool
		case *qdrant.PayloadIndexParams_DatetimeIndexParams:
			want = qdrant.FieldType_FieldTypeDatetime
		case *qdrant.PayloadIndexParams_UuidIndexParams:
			want = qdrant.FieldType_FieldTypeUuid
		default:
			return fieldIndex{}, status.Errorf(codes.Unimplemented, "qdranttest: index params %T", params.GetIndexParams())
		}
		if t != want {
			return fieldIndex{}, invalid("field_type (%v) and field_index_params do not match", t)
		}
		params = proto.Clone(params).(*qdrant.PayloadIndexParams)
	}
	return fieldIndex{typ: t, params: params}, nil
}

func (ps pointsService) Count(_ context.Context, req *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	s := ps.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if err := checkFilter(req.GetFilter()); err != nil {
		return nil, err
	}
	var n uint64
	for _, p := range c.points {
		if matchFilter(req.GetFilter(), p) {
			n++
		}
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: n}}, nil
}

func (ps pointsService) Query(_ context.Context, req *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	s := ps.s
	s.logQuery(proto.Clone(req).(*qdrant.QueryPoints))
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if req.GetWithVectors().GetEnable() || req.GetWithVectors().GetInclude() != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: with_vectors")
	}
	root := node{
		prefetch:  req.GetPrefetch(),
		query:     req.GetQuery(),
		using:     req.GetUsing(),
		filter:    req.GetFilter(),
		limit:     req.Limit,
		threshold: req.ScoreThreshold,
	}
	offset := int(req.GetOffset())
	res, err := c.eval(root, nil, offset)
	if err != nil {
		return nil, err
	}
	if offset >= len(res) {
		res = nil
	} else {
		res = res[offset:]
	}
	out := &qdrant.QueryResponse{Result: make([]*qdrant.ScoredPoint, 0, len(res))}
	for _, r := range res {
		out.Result = append(out.Result, &qdrant.ScoredPoint{
			Id:      proto.Clone(r.p.id).(*qdrant.PointId),
			Payload: selectPayload(r.p.payload, req.GetWithPayload()),
			Score:   r.score,
		})
	}
	return out, nil
}

// Scroll pages through the points that match the filter in point-id order
// (numeric ids before UUIDs), as Qdrant does without order_by: offset is
// the id to start from (inclusive; it need not exist), limit the page size
// (default 10, at least 1), and next_page_offset the id of the first point
// of the next page, unset on the last page. Payload is returned unless
// with_payload says otherwise (Scroll's default is true, unlike Query's);
// vectors are not returned.
func (ps pointsService) Scroll(_ context.Context, req *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	s := ps.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, err := s.get(req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if req.OrderBy != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: scroll with order_by")
	}
	if req.GetWithVectors().GetEnable() || req.GetWithVectors().GetInclude() != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: with_vectors")
	}
	if err := checkFilter(req.GetFilter()); err != nil {
		return nil, err
	}
	limit := 10
	if req.Limit != nil {
		if req.GetLimit() == 0 {
			return nil, invalid("Validation error in body: [limit: value 0 invalid, must be 1 or larger]")
		}
		limit = int(req.GetLimit())
	}
	from := ""
	if req.Offset != nil {
		if from, err = idKey(req.GetOffset()); err != nil {
			return nil, invalid("%v", err)
		}
	}
	keys := make([]string, 0, len(c.points))
	for k := range c.points {
		if k >= from {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	withPayload := req.GetWithPayload()
	if withPayload == nil {
		withPayload = qdrant.NewWithPayload(true)
	}
	out := &qdrant.ScrollResponse{}
	for _, k := range keys {
		p := c.points[k]
		if !matchFilter(req.GetFilter(), p) {
			continue
		}
		if len(out.Result) == limit {
			out.NextPageOffset = proto.Clone(p.id).(*qdrant.PointId)
			break
		}
		out.Result = append(out.Result, &qdrant.RetrievedPoint{
			Id:      proto.Clone(p.id).(*qdrant.PointId),
			Payload: selectPayload(p.payload, withPayload),
		})
	}
	return out, nil
}

// selectPayload applies a with_payload selector. The Query API returns no
// payload unless asked to.
func selectPayload(p map[string]*qdrant.Value, sel *qdrant.WithPayloadSelector) map[string]*qdrant.Value {
	switch x := sel.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		if x.Enable {
			return clonePayload(p)
		}
	case *qdrant.WithPayloadSelector_Include:
		out := map[string]*qdrant.Value{}
		for _, f := range x.Include.GetFields() {
			if v, ok := p[f]; ok {
				out[f] = proto.Clone(v).(*qdrant.Value)
			}
		}
		return out
	case *qdrant.WithPayloadSelector_Exclude:
		out := clonePayload(p)
		for _, f := range x.Exclude.GetFields() {
			delete(out, f)
		}
		return out
	}
	return nil
}

// String renders a scored entry for test failure messages.
func (r scored) String() string { return fmt.Sprintf("%s:%g", r.p.key, r.score) }
