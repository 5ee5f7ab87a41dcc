package samplekb_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/samplekb"
)

func TestFAQ(t *testing.T) {
	entries, err := samplekb.FAQ()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(entries); n < 30 || n > 60 {
		t.Errorf("FAQ has %d entries, want 30-60", n)
	}
	ids := map[string]bool{}
	langs := map[string]int{}
	for _, e := range entries {
		if e.ID == "" || ids[e.ID] {
			t.Errorf("missing or duplicate id %q", e.ID)
		}
		ids[e.ID] = true
		if !slices.Contains(samplekb.Sources, e.Source) {
			t.Errorf("%s: source %q is not one of %v", e.ID, e.Source, samplekb.Sources)
		}
		langs[e.Lang]++
	}
	if langs["zh"] == 0 || langs["en"] == 0 || len(langs) != 2 {
		t.Errorf("languages = %v, want zh and en only", langs)
	}
}

func TestFSLayout(t *testing.T) {
	fsys := samplekb.FS()
	top, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, d := range top {
		if d.IsDir() {
			dirs = append(dirs, d.Name())
		}
	}
	if !slices.Equal(dirs, samplekb.Sources) {
		t.Errorf("top folders = %v, want %v", dirs, samplekb.Sources)
	}
	exts := map[string]bool{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			exts[path.Ext(p)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".md", ".txt", ".csv", ".html", ".jsonl"} {
		if !exts[want] {
			t.Errorf("no %s file in the knowledge base", want)
		}
	}
}

func ExampleFAQ() {
	entries, err := samplekb.FAQ()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		if strings.Contains(e.Question, "电子发票多久") {
			fmt.Println(e.Source, e.Lang)
			fmt.Println(e.Answer[:strings.Index(e.Answer, "；")])
		}
	}
	// Output:
	// finance zh
	// 客户提交开票申请后，电子普通发票在 3 个工作日内开具并发送到预留邮箱
}

// The sample's tables load, and the worked chain holds: order A100 belongs
// to u1 and its product is P-204.
func TestSampleLookup(t *testing.T) {
	l := samplekb.Lookup()
	r, err := l.Get(context.Background(), retrieval.Scope{}, "u1", "order", "a100")
	if err != nil || r.Fields["product"] != "P-204" {
		t.Fatalf("A100: %+v, %v", r, err)
	}
	if _, err := l.Get(context.Background(), retrieval.Scope{}, "u2", "order", "A100"); !errors.Is(err, retrieval.ErrNotPermitted) {
		t.Errorf("another actor: %v", err)
	}
	if p, err := l.Get(context.Background(), retrieval.Scope{}, "", "product", "P-204"); err != nil || p.Fields["special_rules"] == "" {
		t.Errorf("P-204: %+v, %v", p, err)
	}
}
