package nodes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

// RouteAfterPlan is the router after NodePlan: LabelParts for a question
// with independent parts (or candidates to search each), LabelAggregate for
// a total or count, LabelLookup when the query names a record of the
// structured look-up (a dependent chain), else LabelSearch. The route is
// also taken when no look-up is configured: the nodes then say what they
// cannot do rather than pretend.
func RouteAfterPlan(s state.RAG) string {
	switch {
	case s.Plan != nil && s.Plan.Mode == "none" && len(s.Parts) == 0:
		return LabelSearch
	case len(s.Parts) >= 2:
		return LabelParts
	case s.Query.Shape.Aggregate:
		return LabelAggregate
	case len(s.Lookups) > 0:
		return LabelLookup
	}
	return LabelSearch
}

// lookupIDs returns the records the query names: kind -> ids, in order
// of mention. A look-up that finds the records a question names itself
// (retrieval tables of any knowledge base, see recordFinder) is asked
// first; otherwise the query's entities whose kind is a kind of the
// look-up are taken.
func (n *Nodes) lookupIDs(s *state.RAG) []keyRef {
	if n.p.Lookup == nil {
		return nil
	}
	var out []keyRef
	if f, ok := n.p.Lookup.(recordFinder); ok {
		for _, r := range f.Refs(s.Query.Text) {
			out = append(out, keyRef{kind: r.Kind, id: r.ID})
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, k := range n.p.Lookup.Kinds() {
		for _, e := range s.Query.Entities {
			if string(e.Kind) == k.Name || strings.EqualFold(string(e.Kind), k.Name) {
				out = append(out, keyRef{kind: k.Name, id: e.Value})
			}
		}
	}
	return out
}

// recordFinder is a look-up that finds the records a question names (an
// id that is a key of one of its tables, or shaped like one) and knows
// which of a record's columns hold another table's keys: lookup.Records.
// A record it finds is definite: when the look-up then has no such
// record, the answer says so rather than searching on.
type recordFinder interface {
	Refs(question string) []lookup.Ref
	Related(kind string) map[string]string
}

// totalFinder is a look-up that tells a total or a count over its tables
// from other questions: lookup.Records.
type totalFinder interface {
	IsTotal(question string) bool
}

type keyRef struct{ kind, id string }

// askFor reports the record kind a question refers to as one particular
// record without naming it ("我的订单什么时候发货", "when does my order ship"):
// the run must ask for the id rather than search.
func (n *Nodes) askFor(s *state.RAG) string {
	if n.p.Lookup == nil {
		return ""
	}
	q := strings.ToLower(s.Query.Text)
	for _, k := range n.p.Lookup.Kinds() {
		named := false
		for _, e := range s.Query.Entities {
			if strings.EqualFold(string(e.Kind), k.Name) {
				named = true
			}
		}
		if named {
			continue
		}
		for _, a := range k.Aliases {
			a = strings.ToLower(a)
			for _, det := range []string{"我的", "这个", "这笔", "该", "my ", "this ", "that "} {
				if strings.Contains(q, det+a) {
					return k.Name
				}
			}
		}
	}
	return ""
}

// Hops runs a dependent chain hop by hop: each record the query names is
// looked up (its facts become evidence), and the ids it links to (an
// order's product) are looked up in turn and carried into the query the
// document search then uses. A missing record stops the chain and the
// answer names the hop that failed; a record the actor may not read stops
// the run with no retry under other wordings; a timeout fails the run as a
// timeout. A chain that succeeds yields evidence, never a verdict.
func (n *Nodes) Hops(ctx context.Context, s state.RAG) (state.RAG, error) {
	if n.p.Lookup == nil {
		return s, nil
	}
	c, err := n.caller(ctx)
	if err != nil {
		return s, err
	}
	queue := n.lookupIDs(&s)
	fromQuestion := map[keyRef]bool{}
	for _, r := range queue {
		fromQuestion[r] = true
	}
	seen := map[keyRef]bool{}
	var linked []string
	for len(queue) > 0 && len(s.Hops) < maxHops {
		ref := queue[0]
		queue = queue[1:]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		start := time.Now()
		hop := state.Hop{N: len(s.Hops) + 1, Kind: "lookup", Input: ref.kind + " " + ref.id}
		rec, err := n.p.Lookup.Get(ctx, c.Scope, c.Actor, ref.kind, ref.id)
		if err == nil && (rec.Kind != ref.kind || strings.TrimSpace(rec.ID) == "") {
			// Not the record asked for: it must not become evidence.
			err = fmt.Errorf("look-up answered %q record %q for %s %s: %w", rec.Kind, rec.ID, ref.kind, ref.id, retrieval.ErrInvalid)
		}
		t := state.SubTask{Node: NodeHops, Kind: "lookup", Task: "lookup " + ref.kind, Input: s.Question, Query: ref.kind + " " + ref.id, Took: time.Since(start)}
		switch {
		case err == nil:
			hop.Status, t.Status, t.Hits, t.IDs = state.StatusOK, state.StatusOK, 1, []string{recordID(rec)}
			s.Records = append(s.Records, rec)
			for _, l := range n.links(rec) {
				if !seen[l] {
					queue = append(queue, l)
					linked = append(linked, l.id)
					hop.Found = strings.TrimSpace(hop.Found + " " + l.kind + " " + l.id)
				}
			}
		case errors.Is(err, retrieval.ErrNotPermitted):
			hop.Status, hop.Error, t.Status, t.Err = state.StatusDenied, err.Error(), state.StatusDenied, err.Error()
		case errors.Is(err, retrieval.ErrNotFound) && !fromQuestion[ref] && len(s.Hops) > 0 || errors.Is(err, retrieval.ErrNotFound) && (n.named(s.Query.Text, ref.kind) || n.finds()):
			hop.Status, hop.Error, t.Status, t.Err = state.StatusMissing, err.Error(), state.StatusMissing, err.Error()
		case errors.Is(err, retrieval.ErrNotFound):
			// An id that only looks like a record's ("tier-1"), the question
			// not naming the kind: no chain, an ordinary search.
			t.Status, t.Err = state.StatusMissing, err.Error()
			s.Log(t)
			continue
		default:
			hop.Status, hop.Error, t.Status, t.Err = statusOf(err), err.Error(), statusOf(err), err.Error()
		}
		s.Hops = append(s.Hops, hop)
		s.Log(t)
		if err != nil {
			trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.hops", len(s.Hops)), attribute.String("adaptrag.hop.status", string(hop.Status)))
			if hop.Status == state.StatusDenied || hop.Status == state.StatusMissing {
				n.stopChain(&s, hop)
				return s, nil
			}
			return s, fmt.Errorf("hop %d (%s): %w", hop.N, hop.Input, err)
		}
	}
	if len(linked) > 0 {
		// The next hop searches the documents for what the chain found: the
		// linked ids take the place of the record the question started from,
		// with the words of the records found last (a service's handling
		// rules name the policy section that applies).
		if f, ok := n.p.Lookup.(recordFinder); ok {
			linked = append(linked, leafWords(s.Records, f)...)
		}
		s.Query.Text = n.hopQuery(s.Query.Text, s.Lookups, linked)
		s.Query.Rewritten = true
		s.Hops = append(s.Hops, state.Hop{N: len(s.Hops) + 1, Kind: "search", Input: s.Query.Text, Status: state.StatusOK})
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.Int("adaptrag.hops", len(s.Hops)))
	return s, nil
}

// leafWords are the text values of the chain's records that link nowhere
// further: not keys, not numbers or dates, not ids, at most 60 runes each.
func leafWords(recs []retrieval.Record, f recordFinder) []string {
	var out []string
	for i, r := range recs {
		if i == 0 || len(f.Related(r.Kind)) > 0 {
			continue
		}
		keys := make([]string, 0, len(r.Fields))
		for k := range r.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := strings.TrimSpace(r.Fields[k])
			if v == "" || v == r.ID || len([]rune(v)) > 60 || !strings.ContainsFunc(v, unicode.IsLetter) || strings.ContainsFunc(v, unicode.IsDigit) {
				continue
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// hopQuery rewrites q for the search hop: the first looked-up id (with the
// word naming its kind, "订单 A100", "order A100") is replaced by the ids the
// chain found; when it cannot be found they are appended.
func (n *Nodes) hopQuery(q string, lookups, linked []string) string {
	repl := strings.Join(linked, " ")
	if len(lookups) == 0 {
		return q + " " + repl
	}
	kind, id, _ := strings.Cut(lookups[0], ":")
	i := strings.Index(strings.ToUpper(q), strings.ToUpper(id))
	if i < 0 {
		return q + " " + repl
	}
	start, end := i, i+len(id)
	for _, k := range n.p.Lookup.Kinds() {
		if k.Name != kind {
			continue
		}
		for _, a := range k.Aliases {
			pre := strings.TrimRight(q[:start], " ")
			if strings.HasSuffix(strings.ToLower(pre), strings.ToLower(a)) {
				start = len(pre) - len(a)
				break
			}
		}
	}
	return strings.TrimSpace(q[:start] + repl + q[end:])
}

// named reports whether q uses a word for the record kind ("订单",
// "order").
func (n *Nodes) named(q, kind string) bool {
	q = strings.ToLower(q)
	for _, k := range n.p.Lookup.Kinds() {
		if k.Name != kind {
			continue
		}
		for _, a := range k.Aliases {
			if strings.Contains(q, strings.ToLower(a)) {
				return true
			}
		}
	}
	return false
}

// maxHops bounds a chain.
const maxHops = 4

// finds reports whether the look-up finds the records a question names.
func (n *Nodes) finds() bool {
	_, ok := n.p.Lookup.(recordFinder)
	return ok
}

// links are the ids a record points to in other tables: the values of the
// columns the look-up relates to another table, else field values named
// after another kind the look-up serves (an order's product).
func (n *Nodes) links(rec retrieval.Record) []keyRef {
	var out []keyRef
	if f, ok := n.p.Lookup.(recordFinder); ok {
		rel := f.Related(rec.Kind)
		cols := make([]string, 0, len(rel))
		for c := range rel {
			cols = append(cols, c)
		}
		sort.Strings(cols)
		for _, c := range cols {
			if v := strings.TrimSpace(rec.Fields[c]); v != "" {
				out = append(out, keyRef{kind: rel[c], id: v})
			}
		}
		return out
	}
	kinds := n.p.Lookup.Kinds()
	fields := make([]string, 0, len(rec.Fields))
	for f := range rec.Fields {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		for _, k := range kinds {
			if k.Name == rec.Kind {
				continue
			}
			if strings.EqualFold(f, k.Name) || strings.EqualFold(f, k.Name+"_id") {
				if v := rec.Fields[f]; v != "" {
					out = append(out, keyRef{kind: k.Name, id: v})
				}
			}
		}
	}
	return out
}

// stopChain ends the run at a failed hop with a reply that names it.
func (n *Nodes) stopChain(s *state.RAG, hop state.Hop) {
	t := n.cfg.Texts.lang(runLang(s))
	r := strings.NewReplacer("{hop}", strconv.Itoa(hop.N), "{what}", hop.Input)
	if hop.Status == state.StatusDenied {
		s.Answer, s.AnsweredBy = r.Replace(t.NotPermitted), state.ByNoAccess
	} else {
		s.Answer, s.AnsweredBy = r.Replace(t.MissingLink), state.ByMissing
	}
	s.Stopped = true
}

// RouteAfterHops is the router after NodeHops: LabelStop when the chain
// stopped (the answer says why), else LabelSearch.
func RouteAfterHops(s state.RAG) string {
	if s.Stopped {
		return LabelStop
	}
	return LabelSearch
}

// recordID is the evidence id of a record.
func recordID(r retrieval.Record) string { return r.Kind + ":" + r.ID }

// recordHit turns a record into a passage of collection "lookup", so that
// its facts are cited like any evidence.
func recordHit(r retrieval.Record) retrieval.Hit {
	keys := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s:", r.Kind, r.ID)
	for _, k := range keys {
		if v := r.Fields[k]; v != "" {
			fmt.Fprintf(&b, " %s: %s;", k, v)
		}
	}
	return retrieval.Hit{
		Collection: CollectionLookup, Method: "lookup", Score: 1, Relevance: 1,
		Chunk: retrieval.Chunk{ID: recordID(r), DocID: recordID(r), Title: r.Kind + " " + r.ID, ContentType: retrieval.ContentTableRow,
			Text: strings.TrimSuffix(b.String(), ";"), Meta: map[string]string{retrieval.MetaOrigin: r.Origin, retrieval.MetaLocator: r.Locator}},
	}
}

// Aggregate answers a total or count with a deterministic query over every
// record the question selects, through the look-up when it can aggregate;
// otherwise it says that a total cannot be computed from a sample of
// passages, rather than summing top-k hits.
func (n *Nodes) Aggregate(ctx context.Context, s state.RAG) (state.RAG, error) {
	t := n.cfg.Texts.lang(runLang(&s))
	agg, ok := n.p.Lookup.(retrieval.Aggregator)
	if n.p.Lookup == nil || !ok {
		s.Answer, s.AnsweredBy = t.CannotTotal, state.ByNoTotal
		return s, nil
	}
	c, err := n.caller(ctx)
	if err != nil {
		return s, err
	}
	start := time.Now()
	a, err := agg.Aggregate(ctx, c.Scope, c.Actor, s.Query.Text)
	if err == nil && (math.IsNaN(a.Value) || math.IsInf(a.Value, 0)) {
		err = fmt.Errorf("the look-up's %s is %v: %w", a.Op, a.Value, retrieval.ErrInvalid)
	}
	st := state.SubTask{Node: NodeAggregate, Kind: "aggregate", Task: "aggregate", Input: s.Question, Query: a.Query, Hits: max(len(a.Records), a.Rows), Took: time.Since(start), Status: state.StatusOK}
	if err != nil {
		st.Status, st.Err = statusOf(err), err.Error()
		s.Log(st)
		if errors.Is(err, errors.ErrUnsupported) {
			s.Answer, s.AnsweredBy = t.CannotTotal, state.ByNoTotal
			s.Warn(NodeAggregate, state.KindInvalid, err)
			return s, nil
		}
		return s, fmt.Errorf("aggregate: %w", err)
	}
	for _, r := range a.Records {
		st.IDs = append(st.IDs, recordID(r))
	}
	s.Log(st)
	s.Aggregate = &a
	s.Records = append(s.Records, a.Records...)
	s.Docs = nil
	for _, r := range a.Records {
		s.Docs = append(s.Docs, recordHit(r))
	}
	value := strconv.FormatFloat(a.Value, 'f', -1, 64)
	if a.Unit != "" {
		value += " " + a.Unit
	}
	var cites []string
	for i := range s.Docs {
		s.Citations = append(s.Citations, state.CitationOf(i+1, s.Docs[i]))
		cites = append(cites, "["+strconv.Itoa(i+1)+"]")
	}
	rows := len(a.Records)
	if a.Rows > rows {
		rows = a.Rows
	}
	s.Answer = strings.NewReplacer("{op}", a.Op, "{value}", value, "{count}", strconv.Itoa(rows), "{query}", a.Query).Replace(t.AggregateAnswer) +
		" " + strings.Join(cites, "")
	s.AnsweredBy = state.ByAggregate
	return s, nil
}

// recordsAsEvidence prepends the records the chain found to the pool, as
// passages, so that they are cited like documents.
func recordsAsEvidence(s *state.RAG, pool []retrieval.Hit) []retrieval.Hit {
	if len(s.Records) == 0 || s.Aggregate != nil {
		return pool
	}
	out := make([]retrieval.Hit, 0, len(s.Records)+len(pool))
	for _, r := range s.Records {
		out = append(out, recordHit(r))
	}
	return append(out, slices.DeleteFunc(pool, func(h retrieval.Hit) bool { return h.Collection == CollectionLookup })...)
}
