package state_test

import (
	"reflect"
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
