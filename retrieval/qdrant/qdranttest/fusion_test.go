package qdranttest

import (
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

// list builds a ranked list of numeric point ids.
func list(ids ...uint64) []scored {
	out := make([]scored, len(ids))
	for i, id := range ids {
		k, _ := idKey(qdrant.NewIDNum(id))
		out[i] = scored{p: &point{id: qdrant.NewIDNum(id), key: k}}
	}
	return out
}

func num(s scored) uint64 { return s.p.id.GetNum() }

// TestRRFMatchesQdrant reproduces test_rrf_scoring of Qdrant's
// lib/segment/src/common/reciprocal_rank_fusion.rs: same input, same k
// (DEFAULT_RRF_K = 2), same expected float32 scores.
func TestRRFMatchesQdrant(t *testing.T) {
	got, err := rrf([][]scored{
		list(2, 1),
		list(1, 2, 3),
		list(5, 3, 1),
	}, defaultRRFK, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    uint64
		score float32
	}{{1, 1.0833334}, {2, 0.8333334}, {3, 0.5833334}, {5, 0.5}}
	if len(got) != len(want) {
		t.Fatalf("got %d points %v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if num(got[i]) != w.id || got[i].score != w.score {
			t.Errorf("rank %d = id %d score %v, want id %d score %v", i, num(got[i]), got[i].score, w.id, w.score)
		}
	}
}

// TestRRFOne is Qdrant's test_rrf_scoring_one: a single point scores 1/(0+2).
func TestRRFOne(t *testing.T) {
	got, err := rrf([][]scored{list(1)}, defaultRRFK, nil)
	if err != nil || len(got) != 1 || got[0].score != 0.5 {
		t.Errorf("rrf of one point = %v, %v; want score 0.5", got, err)
	}
	if got, err := rrf(nil, defaultRRFK, nil); err != nil || len(got) != 0 {
		t.Errorf("rrf of nothing = %v, %v; want empty", got, err)
	}
}

// TestRRFWeights follows Qdrant's weighted tests: weights [3, 1] favour the
// first list, a zero weight contributes nothing, and the weight count must
// match the list count.
func TestRRFWeights(t *testing.T) {
	lists := [][]scored{list(1, 2), list(2, 1)}
	eq, err := rrf(lists, defaultRRFK, nil)
	if err != nil || eq[0].score != eq[1].score {
		t.Errorf("unweighted mirror lists = %v, %v; want equal scores", eq, err)
	}
	w, err := rrf(lists, defaultRRFK, []float32{3, 1})
	if err != nil || num(w[0]) != 2 || w[0].score <= w[1].score {
		t.Errorf("weights [3 1] = %v, %v; want point 2 strictly first", w, err)
	}
	z, err := rrf([][]scored{list(1), list(2)}, defaultRRFK, []float32{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range z {
		want := map[uint64]float32{1: 0.5, 2: 0}[num(s)]
		if s.score != want {
			t.Errorf("zero weight: point %d scores %v, want %v", num(s), s.score, want)
		}
	}
	for _, ws := range [][]float32{{1, 2, 3}, {1}} {
		if _, err := rrf([][]scored{list(1), list(2)}, defaultRRFK, ws); err == nil {
			t.Errorf("%d weights for 2 lists: no error", len(ws))
		}
	}
}
