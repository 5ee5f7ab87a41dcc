package qdrant

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
	qc "github.com/qdrant/go-client/qdrant"
)

// Payload keys of a point. Only the well-known chunk fields live at the top
// level; free-form metadata lives under "meta", so a filter on a Meta key can
// never address the tenant field.
const (
	fieldID          = "id"
	fieldDocID       = "doc_id"
	fieldTenant      = "tenant"
	fieldSource      = "source"
	fieldTitle       = "title"
	fieldContentType = "content_type"
	fieldPosition    = "position"
	fieldText        = "text"
	fieldMeta        = "meta"
)

// indexedFields get a keyword payload index when a collection is created:
// the fields every search or delete filters on.
var indexedFields = []string{fieldTenant, fieldSource, fieldDocID, fieldContentType}

// idNamespace is the UUID namespace of point ids (random, fixed forever:
// changing it would orphan every stored point).
var idNamespace = [16]byte{0x6b, 0x1f, 0x3a, 0x52, 0x9d, 0x04, 0x4c, 0x7e, 0xa1, 0x38, 0x0e, 0x5d, 0xc2, 0x97, 0x44, 0x1b}

// PointID returns the Qdrant point id (a UUID) of a chunk: a name-based
// UUID (version 5, SHA-1, RFC 9562) of the tenant and the chunk id. Qdrant
// accepts only unsigned integers and UUIDs as ids, so the chunk id itself is
// kept in the payload. The tenant is part of the name so that two tenants
// ingesting the same content (hence the same chunk id) cannot overwrite each
// other's points.
func PointID(tenant, chunkID string) string {
	h := sha1.New()
	h.Write(idNamespace[:])
	// Length-prefix the tenant so that ("ab", "c") and ("a", "bc") differ.
	h.Write([]byte(strconv.Itoa(len(tenant))))
	h.Write([]byte{':'})
	h.Write([]byte(tenant))
	h.Write([]byte(chunkID))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// termIndex maps a term to its sparse dimension: 32-bit FNV-1a, stable
// across processes and releases. Colliding terms share a dimension, which
// costs a little precision on those terms only.
func termIndex(term string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(term))
	return h.Sum32()
}

// docSparse returns the BM25 document weights of a chunk's terms,
// tf*(k1+1) / (tf + k1*(1-b+b*len/avgLen)), sorted by dimension. Qdrant
// multiplies them by the IDF of the dimension at query time. A text without
// terms gives nil.
func docSparse(terms []string, avgLen float64) ([]uint32, []float32) {
	if len(terms) == 0 {
		return nil, nil
	}
	tf := make(map[uint32]int, len(terms))
	for _, t := range terms {
		tf[termIndex(t)]++
	}
	norm := BM25K1 * (1 - BM25B + BM25B*float64(len(terms))/avgLen)
	idx := make([]uint32, 0, len(tf))
	for i := range tf {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	val := make([]float32, len(idx))
	for j, i := range idx {
		f := float64(tf[i])
		val[j] = float32(f * (BM25K1 + 1) / (f + norm))
	}
	return idx, val
}

// querySparse returns a query's sparse vector: weight 1 per distinct term,
// so that the score is the sum over shared terms of IDF times the document
// weight, which is BM25.
func querySparse(terms []string) ([]uint32, []float32) {
	seen := make(map[uint32]bool, len(terms))
	idx := make([]uint32, 0, len(terms))
	for _, t := range terms {
		i := termIndex(t)
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	slices.Sort(idx)
	val := make([]float32, len(idx))
	for j := range val {
		val[j] = 1
	}
	return idx, val
}

// toPayload stores every chunk field but the vector.
func toPayload(c *retrieval.Chunk) map[string]*qc.Value {
	meta := make(map[string]*qc.Value, len(c.Meta))
	for k, v := range c.Meta {
		meta[k] = qc.NewValueString(v)
	}
	return map[string]*qc.Value{
		fieldID:          qc.NewValueString(c.ID),
		fieldDocID:       qc.NewValueString(c.DocID),
		fieldTenant:      qc.NewValueString(c.Tenant),
		fieldSource:      qc.NewValueString(c.Source),
		fieldTitle:       qc.NewValueString(c.Title),
		fieldContentType: qc.NewValueString(c.ContentType),
		fieldPosition:    qc.NewValueInt(int64(c.Position)),
		fieldText:        qc.NewValueString(c.Text),
		fieldMeta:        qc.NewValueFromFields(meta),
	}
}

// fromPayload rebuilds a chunk (without its vector) from a point payload.
func fromPayload(p map[string]*qc.Value) retrieval.Chunk {
	str := func(k string) string { return p[k].GetStringValue() }
	c := retrieval.Chunk{
		ID:          str(fieldID),
		DocID:       str(fieldDocID),
		Tenant:      str(fieldTenant),
		Source:      str(fieldSource),
		Title:       str(fieldTitle),
		ContentType: str(fieldContentType),
		Text:        str(fieldText),
	}
	switch v := p[fieldPosition].GetKind().(type) {
	case *qc.Value_IntegerValue:
		c.Position = int(v.IntegerValue)
	case *qc.Value_DoubleValue: // a payload written through the REST API
		c.Position = int(v.DoubleValue)
	}
	if fields := p[fieldMeta].GetStructValue().GetFields(); len(fields) > 0 {
		c.Meta = make(map[string]string, len(fields))
		for k, v := range fields {
			c.Meta[k] = v.GetStringValue()
		}
	}
	return c
}

// payloadKey maps a filter key to its payload path: well-known fields at the
// top level, everything else under meta.
func payloadKey(key string) (path string, meta bool) {
	switch key {
	case retrieval.KeySource, retrieval.KeyDocID, retrieval.KeyTitle, retrieval.KeyContentType:
		return key, false
	}
	return fieldMeta + "." + key, true
}

// buildFilter returns the Qdrant filter of a request: the tenant scope as a
// must condition, then each condition of f. ok is false when f can match
// nothing (a condition without values), so the caller can skip the call.
func buildFilter(scope retrieval.Scope, f retrieval.Filter) (filter *qc.Filter, ok bool, err error) {
	must := []*qc.Condition{qc.NewMatchKeyword(fieldTenant, scope.Tenant)}
	for _, cond := range f.Must {
		if cond.Key == "" {
			return nil, false, fmt.Errorf("filter condition with an empty key: %w", retrieval.ErrInvalid)
		}
		if strings.ContainsAny(cond.Key, `."[]`) {
			// Qdrant would read these as path syntax.
			return nil, false, fmt.Errorf("filter key %q contains one of . \" [ ]: %w", cond.Key, retrieval.ErrInvalid)
		}
		if len(cond.Values) == 0 {
			return nil, false, nil
		}
		path, meta := payloadKey(cond.Key)
		vals := slices.Clone(cond.Values)
		slices.Sort(vals)
		vals = slices.Compact(vals)
		var c *qc.Condition
		if len(vals) == 1 {
			c = qc.NewMatchKeyword(path, vals[0])
		} else {
			c = qc.NewMatchKeywords(path, vals...)
		}
		// A chunk without a Meta key has the value "" (Chunk.Value), but
		// Qdrant's match never sees a missing field: add "or it is absent".
		// Well-known fields are always stored, so they need no such case.
		if meta && vals[0] == "" {
			c = qc.NewFilterAsCondition(&qc.Filter{Should: []*qc.Condition{c, qc.NewIsEmpty(path)}})
		}
		must = append(must, c)
	}
	return &qc.Filter{Must: must}, true, nil
}

// sortHits orders hits best first and breaks the ties Qdrant leaves
// unspecified by chunk id, as retrieval.FuseRRF does.
func sortHits(h []retrieval.Hit) {
	slices.SortStableFunc(h, func(a, b retrieval.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
}
