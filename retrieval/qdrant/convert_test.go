package qdrant

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/google/uuid"
)

// TestPointIDIsUUIDv5 checks PointID against an independent UUIDv5
// implementation over the same namespace and name.
func TestPointIDIsUUIDv5(t *testing.T) {
	for _, tc := range []struct{ tenant, id string }{{"", "c1"}, {"acme", "c1"}, {"ab", "c"}, {"a", "bc"}, {"租户", "块-7"}} {
		got := PointID(tc.tenant, tc.id)
		name := fmt.Sprintf("%d:%s%s", len(tc.tenant), tc.tenant, tc.id)
		want := uuid.NewSHA1(uuid.UUID(idNamespace), []byte(name)).String()
		if got != want {
			t.Errorf("PointID(%q, %q) = %s, want %s", tc.tenant, tc.id, got, want)
		}
		if u := uuid.MustParse(got); u.Version() != 5 || u.Variant() != uuid.RFC4122 {
			t.Errorf("PointID(%q, %q) = %s is not an RFC 4122 version 5 UUID", tc.tenant, tc.id, got)
		}
	}
	if PointID("ab", "c") == PointID("a", "bc") {
		t.Error("tenant and id boundaries collide")
	}
	if a, b := PointID("x", "c1"), PointID("x", "c1"); a != b {
		t.Error("PointID is not deterministic")
	}
}

func TestDocSparse(t *testing.T) {
	// "a a b" with avgLen 3: len/avg = 1, so the norm is k1 = 1.2 and
	// tf 2 -> 2*2.2/3.2, tf 1 -> 2.2/2.2.
	idx, val := docSparse([]string{"a", "a", "b"}, 3)
	want := map[uint32]float64{termIndex("a"): 2 * 2.2 / 3.2, termIndex("b"): 1}
	if len(idx) != 2 || !slices.IsSorted(idx) {
		t.Fatalf("indices %v: want 2, sorted", idx)
	}
	for i, ix := range idx {
		if math.Abs(float64(val[i])-want[ix]) > 1e-6 {
			t.Errorf("weight of %d = %v, want %v", ix, val[i], want[ix])
		}
	}
	// A chunk twice the average length weighs a single occurrence less.
	_, long := docSparse([]string{"a", "x", "y", "z", "w", "v"}, 3)
	_, short := docSparse([]string{"a"}, 3)
	if !(slices.Max(long) < slices.Max(short)) {
		t.Errorf("length normalisation: long %v, short %v", long, short)
	}
	if idx, val := docSparse(nil, 3); idx != nil || val != nil {
		t.Errorf("no terms = %v %v, want nil", idx, val)
	}
}

func TestQuerySparse(t *testing.T) {
	idx, val := querySparse([]string{"b", "a", "b"})
	if len(idx) != 2 || !slices.IsSorted(idx) || !slices.Equal(val, []float32{1, 1}) {
		t.Errorf("querySparse = %v %v, want two sorted indices of weight 1", idx, val)
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	in := retrieval.Chunk{ID: "i", DocID: "d", Tenant: "t", Source: "s", Title: "T", ContentType: retrieval.ContentFAQ,
		Position: 42, Text: "x", Meta: map[string]string{"k": "v", "empty": ""}}
	out := fromPayload(toPayload(&in))
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}
