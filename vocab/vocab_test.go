package vocab

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/query"
)

func domain(t *testing.T, name string) *Vocabulary {
	t.Helper()
	v, err := FromFS(context.Background(), os.DirFS(filepath.Join("..", "query", "testdata", "domains", name, "kb")))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Names of one table column share a kind; descriptions, prices and times
// are no names.
func TestKindsFromTables(t *testing.T) {
	cases := []struct {
		domain   string
		siblings []string
		not      []string
	}{
		{"car_rental_zh", []string{"虹桥机场店", "浦东机场店", "静安寺店", "徐家汇店"}, []string{"158元", "07:00-23:00"}},
		{"car_rental_zh", []string{"轩逸", "凯美瑞", "途观L", "GL8"}, nil},
		{"mobile_plans_en", []string{"Spark", "Flow", "Surge"}, []string{"$25", "10 GB"}},
		{"mobile_plans_en", []string{"ACT-112", "ACT-207", "ACT-318"}, nil},
		{"hotel_zh", []string{"银卡", "金卡", "钻石卡"}, nil},
		{"appliance_en", []string{"WM-700", "WM-900", "DW-300", "RF-550"}, []string{"8 kg"}},
	}
	for _, c := range cases {
		v := domain(t, c.domain)
		kind := v.Kind(c.siblings[0])
		if kind == "" {
			t.Errorf("%s: %q has no kind", c.domain, c.siblings[0])
			continue
		}
		if got := v.Siblings(kind); !slices.Equal(got, c.siblings) {
			t.Errorf("%s: siblings of %q = %q, want %q", c.domain, kind, got, c.siblings)
		}
		for _, n := range c.not {
			if k := v.Kind(n); k != "" {
				t.Errorf("%s: %q is a name of kind %q", c.domain, n, k)
			}
		}
	}
}

// A category column shared by two tables is one kind.
func TestSharedColumnsMerge(t *testing.T) {
	v := domain(t, "appliance_en")
	if a, b := v.Kind("Washing machine"), v.Kind("Dishwasher"); a == "" || a != b {
		t.Fatalf("kinds %q, %q", a, b)
	}
}

func TestNamesBoundariesAndCase(t *testing.T) {
	v := New([]Term{{Name: "Flow", Kind: "plan"}, {Name: "WM-700", Kind: "model"}, {Name: "静安寺店", Kind: "store"}})
	got := v.Names("Does Flow beat the wm-700? go with the flow, Flowers. 静安寺店周末营业吗")
	var names []string
	for _, n := range got {
		names = append(names, n.Text)
	}
	want := []string{"Flow", "wm-700", "静安寺店"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
}

func TestSaveLoad(t *testing.T) {
	v := domain(t, "hotel_zh")
	p := File(t.TempDir(), "acme")
	if err := v.Save(p); err != nil {
		t.Fatal(err)
	}
	w, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	v.Write(&a)
	w.Write(&b)
	if a.String() != b.String() || w.Len() == 0 {
		t.Fatalf("round trip differs:\n%s\n%s", a.String(), b.String())
	}
	if e, err := Load(filepath.Join(t.TempDir(), "none.json")); err != nil || e.Len() != 0 {
		t.Fatalf("missing file: %v, %d terms", err, e.Len())
	}
}

// A column that answers yes or no (lexicon class polar) is an attribute:
// its values are no names, while the key column beside it still is. Every
// polar entry has three golden tables from two domains or more.
func TestPolarColumnsGolden(t *testing.T) { presenceGolden(t, "polar") }

// A column with a value that says a thing is absent (lexicon class
// negation: "无班车", "no pool") is an attribute too.
func TestNegationColumnsGolden(t *testing.T) { presenceGolden(t, "negation") }

func presenceGolden(t *testing.T, class string) {
	b, err := os.ReadFile(filepath.Join("..", "query", "testdata", "lexicon", class+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	variants, domains := map[string]int{}, map[string]map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var g struct {
			Entry, Domain string
			Header        []string
			Rows          [][]string
		}
		if err := json.Unmarshal([]byte(l), &g); err != nil {
			t.Fatal(err)
		}
		tb := ingest.Table{Name: "t", Header: g.Header}
		for _, r := range g.Rows {
			tb.Rows = append(tb.Rows, ingest.Row{Cells: r})
		}
		v := FromDocuments([]ingest.Document{{Path: "t.csv", Tables: []ingest.Table{tb}}})
		for _, r := range g.Rows {
			if k := v.Kind(r[1]); k != "" {
				t.Errorf("%s %v: %q is a name of kind %q", g.Domain, g.Header, r[1], k)
			}
			if v.Kind(r[0]) == "" {
				t.Errorf("%s %v: the key %q is no name", g.Domain, g.Header, r[0])
			}
		}
		variants[g.Entry]++
		if domains[g.Entry] == nil {
			domains[g.Entry] = map[string]bool{}
		}
		domains[g.Entry][g.Domain] = true
	}
	for _, e := range query.Lexicon(class, "") {
		if variants[e] < 3 || len(domains[e]) < 2 {
			t.Errorf("%s %q: %d golden tables from %d domains, want 3 from 2", class, e, variants[e], len(domains[e]))
		}
	}
}
