package state_test

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/adaptrag/adaptrag/plan"
	"github.com/adaptrag/adaptrag/query"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/state"
)

func full() state.RAG {
	hit := func(id string) retrieval.Hit {
		return retrieval.Hit{Chunk: retrieval.Chunk{ID: id, Meta: map[string]string{"k": "v"}, Vector: []float32{1}}}
	}
	return state.RAG{
		Question: "q", History: []state.Message{{Role: "user", Content: "h"}},
		Query: state.Query{Text: "q", Variants: []string{"v"}, Vector: []float32{1}, Resolved: []query.Resolution{{Mention: "it", Value: "P-1"}},
			Unresolved: []string{"that"}, Entities: []query.Entity{{Value: "P-1"}}},
		Intent: &plan.IntentResult{Intent: "FAQ_QUERY"}, Plan: &plan.Plan{DocTopK: 3},
		Clarify: &query.Clarify{Mention: "it", Candidates: []string{"a", "b"}},
		Parts:   []state.Part{{N: 1, Evidence: []string{"x"}}}, Hops: []state.Hop{{N: 1}}, Lookups: []string{"order:A1"},
		Records:   []retrieval.Record{{ID: "A1", Fields: map[string]string{"f": "v"}}},
		Aggregate: &retrieval.Aggregate{Records: []retrieval.Record{{Fields: map[string]string{"f": "v"}}}},
		FAQ:       []retrieval.Hit{hit("f")}, Candidates: []retrieval.Hit{hit("c")}, Docs: []retrieval.Hit{hit("d")},
		Citations: []state.Citation{{N: 1}}, Usage: []state.Usage{{Node: "n"}}, Warnings: []state.Warning{{Node: "n"}},
		SubTasks: []state.SubTask{{Node: "n", IDs: []string{"x"}}},
	}
}

// A clone equals its original and shares nothing with it: every slice,
// map and pointer written through the clone leaves the original as it was.
func TestCloneIsDeep(t *testing.T) {
	orig := full()
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatal("a clone differs from its original")
	}
	c.History[0].Content = "x"
	c.Query.Variants[0], c.Query.Vector[0], c.Query.Resolved[0].Value, c.Query.Unresolved[0], c.Query.Entities[0].Value = "x", 9, "x", "x", "x"
	c.Intent.Intent, c.Plan.DocTopK = "x", 9
	c.Clarify.Candidates[0] = "x"
	c.Parts[0].Evidence[0], c.Hops[0].N, c.Lookups[0] = "x", 9, "x"
	c.Records[0].Fields["f"], c.Aggregate.Records[0].Fields["f"] = "x", "x"
	for _, hs := range [][]retrieval.Hit{c.FAQ, c.Candidates, c.Docs} {
		hs[0].Chunk.Meta["k"], hs[0].Chunk.Vector[0] = "x", 9
	}
	c.Citations[0].N, c.Usage[0].Node, c.Warnings[0].Node, c.SubTasks[0].IDs[0] = 9, "x", "x", "x"
	if !reflect.DeepEqual(orig, full()) {
		t.Error("writing through a clone changed the original")
	}
}

// A metadata map that several hit lists share is copied once: the copy's
// lists share the copy (a write through one list shows in the other, as in
// the original) and never the original's map. This holds with few hits
// (scanned) and many (indexed).
func TestCloneKeepsSharedMetaShared(t *testing.T) {
	for _, n := range []int{4, 300} {
		var s state.RAG
		for i := range n {
			s.Candidates = append(s.Candidates, retrieval.Hit{Chunk: retrieval.Chunk{ID: strconv.Itoa(i), Meta: map[string]string{"k": strconv.Itoa(i)}}})
		}
		s.Docs = []retrieval.Hit{s.Candidates[n-1], s.Candidates[1], {Chunk: retrieval.Chunk{ID: "own", Meta: map[string]string{"k": "own"}}}}
		s.FAQ = []retrieval.Hit{s.Candidates[2], {Chunk: retrieval.Chunk{ID: "nil"}}}
		c := s.Clone()
		if !reflect.DeepEqual(c, s) {
			t.Fatalf("n=%d: a clone differs from its original", n)
		}
		c.Docs[0].Chunk.Meta["k"], c.Docs[1].Chunk.Meta["k"], c.FAQ[0].Chunk.Meta["k"], c.Docs[2].Chunk.Meta["k"] = "a", "b", "c", "d"
		if got := c.Candidates[n-1].Chunk.Meta["k"] + c.Candidates[1].Chunk.Meta["k"] + c.Candidates[2].Chunk.Meta["k"]; got != "abc" {
			t.Errorf("n=%d: the copy's candidates read %q through the shared maps, want abc", n, got)
		}
		for i, h := range s.Candidates {
			if h.Chunk.Meta["k"] != strconv.Itoa(i) {
				t.Errorf("n=%d: writing through the copy changed the original's candidate %d: %v", n, i, h.Chunk.Meta)
			}
		}
		if s.Docs[2].Chunk.Meta["k"] != "own" || c.FAQ[1].Chunk.Meta != nil {
			t.Errorf("n=%d: an unshared map: original %v, nil map copied as %v", n, s.Docs[2].Chunk.Meta, c.FAQ[1].Chunk.Meta)
		}
	}
}

// The sub-tasks' ID lists of a clone are its own, and appending to one
// never writes over another's (they are copied into one array).
func TestCloneSubTaskIDs(t *testing.T) {
	orig := state.RAG{SubTasks: []state.SubTask{{IDs: []string{"a", "b"}}, {}, {IDs: []string{}}, {IDs: []string{"c"}}}}
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone %+v differs from %+v (nil and empty lists included)", c.SubTasks, orig.SubTasks)
	}
	c.SubTasks[0].IDs = append(c.SubTasks[0].IDs, "x")
	c.SubTasks[2].IDs = append(c.SubTasks[2].IDs, "y")
	c.SubTasks[3].IDs[0] = "z"
	if got := c.SubTasks[3].IDs; !reflect.DeepEqual(got, []string{"z"}) {
		t.Errorf("an append to another sub-task's list changed this one: %q", got)
	}
	if !reflect.DeepEqual(orig.SubTasks[3].IDs, []string{"c"}) || !reflect.DeepEqual(orig.SubTasks[0].IDs, []string{"a", "b"}) {
		t.Errorf("writing through the clone changed the original: %+v", orig.SubTasks)
	}
}
