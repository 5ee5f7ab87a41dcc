package memstore

import (
	"context"
	"math"
	"slices"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/vector"
)

// Filtered search is planned by cardinality. The payload index answers
// the tenant and the source and document conditions with posting lists;
// the smallest of those (the tenant's, or the union of one condition's
// values) bounds how many chunks can match. When that bound is small the
// search considers only the chunks in it that pass every condition
// (vector.Index.SearchAmong: exact up to a few thousand, ranked by codes
// beyond; BM25 scores them all); when it holds nearly the whole store the
// dense search runs unfiltered and checks its results (denseWide);
// otherwise it runs the index search with an accept func that answers the
// indexed conditions from the posting lists and reads a chunk only for the
// other conditions.

// denseExactLimit is the candidate count up to which a dense search scores
// the candidates exactly rather than searching the index. The quantized
// scan keeps 3·sqrt(k·n) candidates and, when fewer vectors pass the
// filter, scores all of them exactly after scanning every code: below that
// count the exact path does the same scoring without the scan.
// BenchmarkFilteredCrossover measures where the two meet.
func denseExactLimit(k, n int) int {
	return max(vector.DefaultExactThreshold, int(math.Ceil(denseExactFactor*math.Sqrt(float64(k)*float64(n)))))
}

// denseExactFactor scales denseExactLimit; see BenchmarkFilteredCrossover.
const denseExactFactor = 3

// sparseExactLimit is the candidate count up to which a BM25 search scores
// the candidates (bm25.SearchAmong) rather than walking the posting lists
// with an accept func. BenchmarkFilteredCrossover (100,000 chunks, CPU
// time per search on a loaded 2-core machine) measured the exact path at
// 0.48 ms against 3.4 for 1% of the chunks, 1.4 against 2.6 for 3% and 1.1
// against 1.4 for 6%; from 10% on the posting lists win. For dense search
// the exact path was 1.8 ms against 11.6 at 1% and 4.8 against 11.3 at 6%,
// so denseExactLimit (6.7% at this size) stays on the safe side.
func sparseExactLimit(k, n int) int {
	return max(4096, n/16)
}

// limit is the crossover def unless a test fixed it.
func (s *Store) limit(def int) int {
	if s.exactLimit != 0 {
		return s.exactLimit
	}
	return def
}

// matcher is a search's filter: the tenant must-filter and the request
// filter, with a context check every 1024 calls of accept so that a long
// scan stops soon after cancellation (it then rejects everything and
// records why).
type matcher struct {
	s      *Store
	ctx    context.Context
	tenant uint32
	// conds are the conditions the payload index answers, each as the set
	// of the ids it admits (the union of its values' posting lists).
	conds []*idSet
	// rest are the other conditions, checked on the chunk.
	rest retrieval.Filter
	// driver is the smallest candidate set: the tenant's posting list or
	// one indexed condition's sets (their union), of est ids in all.
	driver []*idSet
	est    int
	// alone is true when the driver is the only condition: the tenant's
	// list with no other, or one indexed condition's (its lists are the
	// tenant's own) with nothing else. Then every id in it passes.
	alone bool
	n     int
	err   error
}

func (m *matcher) accept(iid uint32) bool {
	if m.n++; m.n&1023 == 0 && m.err == nil {
		m.err = m.ctx.Err()
	}
	if m.err != nil || m.s.tenantOf[iid] != m.tenant {
		return false
	}
	for _, p := range m.conds {
		if !p.has(iid) {
			return false
		}
	}
	return len(m.rest.Must) == 0 || m.rest.Match(&m.s.recs[iid].Chunk)
}

// newMatcher plans the request's filter. It returns nil when nothing can
// match: the scope's tenant has no chunk, or an indexed condition names no
// value that any chunk of the tenant has.
func (s *Store) newMatcher(ctx context.Context, req *retrieval.Request) *matcher {
	tid, ok := s.tenants[req.Scope.Tenant]
	if !ok || s.byTenant[tid].len() == 0 {
		return nil
	}
	m := &matcher{s: s, ctx: ctx, tenant: tid, driver: []*idSet{s.byTenant[tid]}, est: s.byTenant[tid].len()}
	driverCond := -1 // the condition whose sets drive, or -1: the tenant's list
	for _, c := range req.Filter.Must {
		var sets []*idSet
		switch c.Key {
		case retrieval.KeySource:
			for _, v := range dedup(c.Values) {
				if p := s.bySource[srcKey{tid, v}]; p != nil {
					sets = append(sets, p)
				}
			}
		case retrieval.KeyDocID:
			for _, v := range dedup(c.Values) {
				if p := s.byDoc[docKey{req.Scope.Tenant, v}]; p != nil {
					sets = append(sets, p)
				}
			}
		default:
			m.rest.Must = append(m.rest.Must, c)
			continue
		}
		est := 0
		for _, p := range sets {
			est += p.len()
		}
		if est == 0 {
			return nil
		}
		m.conds = append(m.conds, s.union(sets, est))
		if est < m.est {
			m.driver, m.est, driverCond = sets, est, len(m.conds)-1
		}
	}
	m.alone = len(m.rest.Must) == 0 && (len(m.conds) == 0 || len(m.conds) == 1 && driverCond == 0)
	return m
}

// union returns the union of sets, which hold est ids in all and are
// disjoint (the posting lists of one key's values): the set itself when
// there is one, else a sorted slice or, for many ids, a bitmap, so that
// accept tests one set per condition however many values it names.
func (s *Store) union(sets []*idSet, est int) *idSet {
	if len(sets) == 1 {
		return sets[0]
	}
	u := &idSet{n: est}
	if est < bitmapMin || est*32 < len(s.recs) {
		for _, p := range sets {
			u.ids = p.appendTo(u.ids)
		}
		slices.Sort(u.ids)
		return u
	}
	u.bits = make([]uint64, len(s.recs)/64+1)
	for _, p := range sets {
		p.each(func(id uint32) { u.bits[id>>6] |= 1 << (id & 63) })
	}
	return u
}

// dedup returns vs without repeats; the same value twice must not count
// its posting list twice.
func dedup(vs []string) []string {
	if len(vs) < 2 {
		return vs
	}
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}

// small returns, in ascending order, the ids that pass the filter when the
// driver holds at most limit of them; ok is false when it holds more and
// the search should use the index.
func (m *matcher) small(limit int) (ids []uint32, ok bool) {
	if m.est > limit {
		return nil, false
	}
	ids = make([]uint32, 0, m.est)
	for _, p := range m.driver {
		ids = p.appendTo(ids)
	}
	if len(m.driver) > 1 {
		slices.Sort(ids) // the sets of one condition's values are disjoint
	}
	if m.alone {
		// Nothing to check per id (at 1M chunks, reading each id's tenant
		// and condition set for a 1% filter cost about a millisecond).
		if m.err = m.ctx.Err(); m.err != nil {
			return nil, true
		}
		return ids, true
	}
	out := ids[:0]
	for _, id := range ids {
		if m.accept(id) {
			out = append(out, id)
		}
	}
	return out, true
}

// wideShare is the share of the store above which a filter's driver
// counts as nearly everything: the dense search then runs unfiltered for a
// few more results and drops those the filter rejects. A probe with an
// accept func pays per-entry bookkeeping for every vector it scans, which
// buys nothing when almost every vector passes. BenchmarkWideFilter (100k
// clustered chunks, CPU a search, median of three): 1.30 ms against 1.39
// for the probe at 99% of the store, 1.42 against 1.48 at 90%, even at
// 80%; at 1M the bench command measured 2.4 ms unfiltered against 5.7 ms
// for a tenant of 99% searched with the accept func.
const wideShare = 0.9

// wideSlack is how many results beyond k/share the unfiltered search asks
// for, so that a filter passing a little less than its driver promises
// still leaves k.
const wideSlack = 8

// denseWide answers a filtered dense search whose driver holds nearly the
// whole store by an unfiltered search and a post-check; ok is false when
// the driver is smaller, or when fewer than k of the results passed and the
// index held more (the caller then searches with the accept func).
func (s *Store) denseWide(m *matcher, q []float32, k int) (res []vector.Scored, ok bool) {
	n := s.vec.Len()
	if s.noWide || n == 0 || float64(m.est) < wideShare*float64(n) {
		return nil, false
	}
	want := int(math.Ceil(float64(k)*float64(n)/float64(m.est))) + wideSlack
	all := s.vec.Search(q, want, nil)
	res = all[:0]
	for _, r := range all {
		if m.accept(r.ID) {
			if res = append(res, r); len(res) == k {
				return res, true
			}
		}
	}
	// Fewer than k passed: complete only when the index had no more.
	return res, len(all) < want
}

// denseAmong scores the vectors of ids against q exactly and returns the k
// best, best first, ties by ascending id, as vector.Index.SearchExact with
// an accept func admitting ids would.
func (s *Store) denseAmong(q []float32, k int, ids []uint32) []vector.Scored {
	if len(ids) == 0 {
		return nil
	}
	return s.vec.SearchAmong(q, k, ids)
}
