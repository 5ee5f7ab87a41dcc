package adaptrag_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/adaptrag/adaptrag"
	"github.com/adaptrag/adaptrag/api"
	"github.com/adaptrag/adaptrag/state"
)

func v1Schema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := api.Schema(api.SchemaResponse)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func validV1(t *testing.T, rs *jsonschema.Resolved, what string, r api.Response) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: %v\n%.500s", what, err, b)
	}
	return v
}

// Every kind of run converts to a v1 response that validates against the
// v1 schema: small talk, a fact, an analysis, a compound question, an
// ambiguous reference asked back, parts searched for each candidate, and
// a search.
func TestV1ValidatesForEveryKindOfRun(t *testing.T) {
	rs := v1Schema(t)
	f := newFixture(t)
	p := f.pipeline(t)
	hist := []adaptrag.Message{{Role: adaptrag.RoleUser, Content: "P-204 和 P-205 哪个更便宜？"}, {Role: adaptrag.RoleAssistant, Content: "P-204 更便宜。"}}
	seen := map[api.AnsweredBy]bool{}
	for _, req := range []adaptrag.Request{
		{Question: "你好"},
		{Question: "退货要在几天内发起？"},
		{Question: "对比一下差旅报销和招待报销的流程差异"},
		{Question: "退货要在几天内发起，电子发票怎么申请？"},
		{Question: "这个能换吗？", History: hist},
	} {
		res := askWith(t, p, req)
		v := validV1(t, rs, req.Question, res.V1())
		seen[res.V1().AnsweredBy] = true
		if _, ok := v["debug"]; ok {
			t.Errorf("%s: V1 carries the debug record", req.Question)
		}
		if res.V1().Version != api.Version || len(res.V1().Path) != len(res.Path) {
			t.Errorf("%s: version %q, path %v", req.Question, res.V1().Version, res.V1().Path)
		}
	}
	if !seen[api.ByClarify] {
		t.Errorf("no run asked back: %v", seen)
	}
	f.opts.Ambiguity = adaptrag.AmbiguitySearchEach
	res := askWith(t, f.pipeline(t), adaptrag.Request{Question: "这个能换吗？", History: hist})
	if v := res.V1(); len(v.Parts) != 2 || v.Parts[0].N != 1 {
		t.Errorf("search each: parts %+v", v.Parts)
	}
	validV1(t, rs, "search each", res.V1())
	sr, err := p.Search(t.Context(), adaptrag.SearchRequest{Query: "退货要在几天内发起？", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	v := sr.V1()
	if v.AnsweredBy != api.BySearch || len(v.Passages) != 2 || v.Passages[0].ID == "" || v.Passages[0].Text == "" {
		t.Errorf("search: by %s, passages %+v", v.AnsweredBy, v.Passages)
	}
	validV1(t, rs, "search", v)
	// The debug record is the internal one, and still validates.
	d := validV1(t, rs, "debug", sr.V1Debug())
	if rec, ok := d["debug"].(map[string]any); !ok || rec["docs"] == nil || rec["decision"] == nil {
		t.Errorf("debug record %v", d["debug"])
	}
}

// The fields of an empty result are empty lists, never null, and a
// relevance out of 0..1 (or NaN) cannot break the response.
func TestV1EmptyAndOddValues(t *testing.T) {
	rs := v1Schema(t)
	r := &adaptrag.Result{Docs: []adaptrag.Passage{{N: 1, ID: "a", Relevance: math.NaN()}, {N: 2, ID: "b", Relevance: 1.5}}}
	v := validV1(t, rs, "empty", r.V1())
	for _, k := range []string{"citations", "passages", "path", "subtasks", "warnings"} {
		if _, ok := v[k].([]any); !ok {
			t.Errorf("%s is %v, want a list", k, v[k])
		}
	}
	if ps := r.V1().Passages; ps[0].Relevance != 0 || ps[1].Relevance != 1 {
		t.Errorf("relevance %v %v, want 0 and 1", ps[0].Relevance, ps[1].Relevance)
	}
}

// Every value a run can give answered_by, a warning's kind or a sub-task's
// status is one the v1 schema admits.
func TestV1EnumsCoverTheState(t *testing.T) {
	for _, b := range []state.AnsweredBy{state.ByDirect, state.ByChitchat, state.ByFAQ, state.ByModel, state.ByExtractive, state.ByNotFound,
		state.BySearch, state.ByClarify, state.ByAskEntity, state.ByNoAccess, state.ByMissing, state.ByAggregate, state.ByNoTotal} {
		if !slices.Contains(api.AnsweredByValues, api.AnsweredBy(b)) {
			t.Errorf("answered_by %q is not in v1", b)
		}
	}
	for _, k := range []state.ErrorKind{state.KindTimeout, state.KindCancelled, state.KindUnavailable, state.KindRefused,
		state.KindInvalid, state.KindNotPermitted, state.KindError} {
		if !slices.Contains(api.WarningKindValues, api.WarningKind(k)) {
			t.Errorf("warning kind %q is not in v1", k)
		}
	}
	for _, s := range []state.Status{state.StatusOK, state.StatusEmpty, state.StatusFallback, state.StatusTimeout, state.StatusError,
		state.StatusMissing, state.StatusDenied, state.StatusRejected} {
		if !slices.Contains(api.StatusValues, api.Status(s)) {
			t.Errorf("status %q is not in v1", s)
		}
	}
}
