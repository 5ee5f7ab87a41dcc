package qdranttest

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultLimit is Qdrant's limit for a query or prefetch that sets none.
const defaultLimit = 10

// defaultRRFK is Qdrant's RRF k: a point at 0-based rank r scores 1/(r + k).
const defaultRRFK = 2

// node is a query or a prefetch: both have the same shape.
type node struct {
	prefetch  []*qdrant.PrefetchQuery
	query     *qdrant.Query
	using     string
	filter    *qdrant.Filter
	limit     *uint64
	threshold *float32
}

// scored is a point with its score under the query that found it.
type scored struct {
	p     *point
	score float32
}

// sortScored orders best first; equal scores by point id, for determinism.
func sortScored(r []scored) {
	slices.SortStableFunc(r, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.p.key, b.p.key)
	})
}

// eval runs n with the filters of its ancestors (Qdrant pushes a parent's
// filter into its prefetches) and returns at most limit+extra results.
func (c *collection) eval(n node, inherited *qdrant.Filter, extra int) ([]scored, error) {
	if err := checkFilter(n.filter); err != nil {
		return nil, err
	}
	filter := andFilter(inherited, n.filter)
	var res []scored
	if len(n.prefetch) > 0 {
		lists := make([][]scored, 0, len(n.prefetch))
		for _, pf := range n.prefetch {
			l, err := c.eval(node{
				prefetch:  pf.GetPrefetch(),
				query:     pf.GetQuery(),
				using:     pf.GetUsing(),
				filter:    pf.GetFilter(),
				limit:     pf.Limit,
				threshold: pf.ScoreThreshold,
			}, filter, 0)
			if err != nil {
				return nil, err
			}
			lists = append(lists, l)
		}
		var err error
		switch q := n.query.GetVariant().(type) {
		case *qdrant.Query_Fusion:
			if q.Fusion != qdrant.Fusion_RRF {
				return nil, status.Errorf(codes.Unimplemented, "qdranttest: fusion %v", q.Fusion)
			}
			res, err = rrf(lists, defaultRRFK, nil)
		case *qdrant.Query_Rrf:
			k := defaultRRFK
			if q.Rrf.K != nil {
				k = int(q.Rrf.GetK())
			}
			if k < 1 {
				return nil, invalid("RRF k must be at least 1, got %d", k)
			}
			res, err = rrf(lists, k, q.Rrf.GetWeights())
		case *qdrant.Query_Nearest:
			// Re-score the union of the prefetched candidates.
			cand := map[string]*point{}
			for _, l := range lists {
				for _, r := range l {
					cand[r.p.key] = r.p
				}
			}
			res, err = c.nearest(q.Nearest, n.using, func(p *point) bool { return cand[p.key] != nil })
		default:
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T over prefetches", q)
		}
		if err != nil {
			return nil, err
		}
	} else {
		match := func(p *point) bool { return matchFilter(filter, p) }
		switch q := n.query.GetVariant().(type) {
		case *qdrant.Query_Nearest:
			var err error
			if res, err = c.nearest(q.Nearest, n.using, match); err != nil {
				return nil, err
			}
		case nil:
			// No query: points in id order.
			for _, p := range c.points {
				if match(p) {
					res = append(res, scored{p: p})
				}
			}
			sortScored(res)
		case *qdrant.Query_Fusion, *qdrant.Query_Rrf:
			return nil, invalid("fusion requires at least one prefetch")
		default:
			return nil, status.Errorf(codes.Unimplemented, "qdranttest: query %T", q)
		}
	}
	if n.threshold != nil {
		t := *n.threshold
		res = slices.DeleteFunc(res, func(r scored) bool { return r.score < t })
	}
	limit := defaultLimit
	if n.limit != nil {
		limit = int(*n.limit)
	}
	if limit+extra < len(res) {
		res = res[:limit+extra]
	}
	return res, nil
}

// nearest scores every point accepted by keep against a dense or sparse
// query vector in the named space.
func (c *collection) nearest(in *qdrant.VectorInput, using string, keep func(*point) bool) ([]scored, error) {
	var res []scored
	switch v := in.GetVariant().(type) {
	case *qdrant.VectorInput_Dense:
		params, ok := c.dense[using]
		if !ok {
			return nil, invalid("Not existing vector name error: %s", using)
		}
		q := append([]float32(nil), v.Dense.GetData()...)
		if uint64(len(q)) != params.GetSize() {
			return nil, invalid("Vector dimension error: expected dim: %d, got %d", params.GetSize(), len(q))
		}
		if params.GetDistance() == qdrant.Distance_Cosine {
			normalize(q)
		}
		for _, p := range c.points {
			d, ok := p.dense[using]
			if !ok || !keep(p) {
				continue
			}
			var s float32
			for i := range q {
				s += q[i] * d[i]
			}
			res = append(res, scored{p: p, score: s})
		}
	case *qdrant.VectorInput_Sparse:
		params, ok := c.sparse[using]
		if !ok {
			return nil, invalid("Not existing vector name error: %s", using)
		}
		q, err := toSparse(v.Sparse)
		if err != nil {
			return nil, err
		}
		if params.GetModifier() == qdrant.Modifier_Idf {
			q = c.applyIDF(using, q)
		}
		for _, p := range c.points {
			d, ok := p.sparse[using]
			if !ok || !keep(p) {
				continue
			}
			// Only points sharing at least one dimension with the query are
			// candidates of a sparse search.
			var s float32
			shared := false
			for ix, w := range q {
				if x, ok := d[ix]; ok {
					s += w * x
					shared = true
				}
			}
			if shared {
				res = append(res, scored{p: p, score: s})
			}
		}
	default:
		return nil, status.Errorf(codes.Unimplemented, "qdranttest: nearest %T", v)
	}
	sortScored(res)
	return res, nil
}

// applyIDF weights each query dimension by Qdrant's IDF,
// ln(1 + (N - n + 0.5)/(n + 0.5)), where N counts the points that have a
// vector in the sparse space and n those among them with the dimension. It
// is computed over the whole collection, whatever the filter.
func (c *collection) applyIDF(using string, q sparseVec) sparseVec {
	total := float64(c.nsparse[using])
	df := c.df[using]
	out := make(sparseVec, len(q))
	for ix, w := range q {
		n := float64(df[ix])
		out[ix] = w * float32(math.Log(1+(total-n+0.5)/(n+0.5)))
	}
	return out
}

// rrf fuses ranked lists the way Qdrant's rrf_scoring does: the point at
// 0-based position pos of a list with weight w gets 1/((pos+1)/w + k - 1),
// summed over lists in float32; with w = 1 that is 1/(pos + k). weights may
// be nil (all 1) or must have one entry per list.
func rrf(lists [][]scored, k int, weights []float32) ([]scored, error) {
	if weights != nil && len(weights) != len(lists) {
		return nil, invalid("Number of weights in RRF should match number of pre-fetches: got %d, expected %d",
			len(weights), len(lists))
	}
	pos := map[string]int{}
	var out []scored
	for li, l := range lists {
		w := float32(1)
		if weights != nil {
			w = weights[li]
		}
		for r, s := range l {
			var sc float32
			if w > 0 {
				sc = 1 / (float32(r+1)/w + float32(k) - 1)
			}
			if i, ok := pos[s.p.key]; ok {
				out[i].score += sc
				continue
			}
			pos[s.p.key] = len(out)
			out = append(out, scored{p: s.p, score: sc})
		}
	}
	sortScored(out)
	return out, nil
}

// andFilter returns a filter that requires both a and b (either may be nil).
func andFilter(a, b *qdrant.Filter) *qdrant.Filter {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(a), qdrant.NewFilterAsCondition(b)}}
}

// checkFilter rejects the parts of the filter language the fake does not
// implement, so that matchFilter never has to guess.
func checkFilter(f *qdrant.Filter) error {
	if f == nil {
		return nil
	}
	if f.MinShould != nil {
		return status.Error(codes.Unimplemented, "qdranttest: min_should")
	}
	for _, cs := range [][]*qdrant.Condition{f.GetMust(), f.GetShould(), f.GetMustNot()} {
		for _, c := range cs {
			if err := checkCondition(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkCondition(c *qdrant.Condition) error {
	switch x := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return checkFilter(x.Filter)
	case *qdrant.Condition_IsEmpty, *qdrant.Condition_HasId:
		return nil
	case *qdrant.Condition_Field:
		fc := x.Field
		if fc.GetKey() == "" {
			return invalid("condition key must not be empty")
		}
		if fc.Range != nil || fc.GeoBoundingBox != nil || fc.GeoRadius != nil || fc.ValuesCount != nil ||
			fc.GeoPolygon != nil || fc.DatetimeRange != nil || fc.IsEmpty != nil || fc.IsNull != nil {
			return status.Errorf(codes.Unimplemented, "qdranttest: field condition on %q", fc.GetKey())
		}
		switch m := fc.GetMatch().GetMatchValue().(type) {
		case *qdrant.Match_Keyword, *qdrant.Match_Keywords, *qdrant.Match_Integer,
			*qdrant.Match_Integers, *qdrant.Match_Boolean:
			return nil
		default:
			return status.Errorf(codes.Unimplemented, "qdranttest: match %T", m)
		}
	}
	return status.Errorf(codes.Unimplemented, "qdranttest: condition %T", c.GetConditionOneOf())
}

// matchFilter reports whether p satisfies f (nil matches everything): every
// must, no must_not, and at least one should when there are any.
func matchFilter(f *qdrant.Filter, p *point) bool {
	if f == nil {
		return true
	}
	for _, c := range f.GetMust() {
		if !matchCondition(c, p) {
			return false
		}
	}
	for _, c := range f.GetMustNot() {
		if matchCondition(c, p) {
			return false
		}
	}
	if len(f.GetShould()) == 0 {
		return true
	}
	for _, c := range f.GetShould() {
		if matchCondition(c, p) {
			return true
		}
	}
	return false
}

func matchCondition(c *qdrant.Condition, p *point) bool {
	switch x := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return matchFilter(x.Filter, p)
	case *qdrant.Condition_HasId:
		for _, id := range x.HasId.GetHasId() {
			if k, err := idKey(id); err == nil && k == p.key {
				return true
			}
		}
		return false
	case *qdrant.Condition_IsEmpty:
		for _, v := range lookup(p.payload, x.IsEmpty.GetKey()) {
			if _, null := v.GetKind().(*qdrant.Value_NullValue); !null {
				return false
			}
		}
		return true
	case *qdrant.Condition_Field:
		vals := lookup(p.payload, x.Field.GetKey())
		// A condition on an array field matches when any element does.
		for _, v := range vals {
			if matchValue(x.Field.GetMatch(), v) {
				return true
			}
		}
	}
	return false
}

func matchValue(m *qdrant.Match, v *qdrant.Value) bool {
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == mv.Keyword
	case *qdrant.Match_Keywords:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && slices.Contains(mv.Keywords.GetStrings(), s.StringValue)
	case *qdrant.Match_Integer:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && i.IntegerValue == mv.Integer
	case *qdrant.Match_Integers:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && slices.Contains(mv.Integers.GetIntegers(), i.IntegerValue)
	case *qdrant.Match_Boolean:
		b, ok := v.GetKind().(*qdrant.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	}
	return false
}

// lookup returns the values at a dotted payload path, flattening arrays on
// the way as Qdrant does ("a.b" reaches into every object of an array a).
func lookup(payload map[string]*qdrant.Value, path string) []*qdrant.Value {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := payload[head]
	if !ok {
		return nil
	}
	var out []*qdrant.Value
	var walk func(v *qdrant.Value)
	walk = func(v *qdrant.Value) {
		switch k := v.GetKind().(type) {
		case *qdrant.Value_ListValue:
			for _, e := range k.ListValue.GetValues() {
				walk(e)
			}
		case *qdrant.Value_StructValue:
			if nested {
				out = append(out, lookup(k.StructValue.GetFields(), rest)...)
			} else {
				out = append(out, v)
			}
		default:
			if !nested {
				out = append(out, v)
			}
		}
	}
	walk(v)
	return out
}
