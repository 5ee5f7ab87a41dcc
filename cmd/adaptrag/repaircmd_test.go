package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// repairKB writes a knowledge base with a docs and a faq store, 20 records
// each, and returns its directory and where the docs log's records start.
func repairKB(t *testing.T) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	var offs []int64
	for _, name := range []string{"docs", "faq"} {
		p := filepath.Join(dir, name)
		s, err := memstore.Open(context.Background(), memstore.Options{Dir: p, CompactBytes: -1, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if name == "docs" {
				st, _ := os.Stat(filepath.Join(p, "store.wal"))
				offs = append(offs, st.Size())
			}
			v := make([]float32, 4)
			v[i%4] = 1
			c := retrieval.Chunk{ID: fmt.Sprint(i), DocID: fmt.Sprint("d", i), Text: "some text", Vector: v}
			if err := s.Upsert(context.Background(), []retrieval.Chunk{c}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir, offs
}

func TestRepairUsage(t *testing.T) {
	for _, args := range [][]string{
		{"repair"},
		{"repair", "--store", "qdrant://localhost:6334/kb"},
		{"repair", "--store", "embedded:" + t.TempDir(), "extra"},
		{"repair", "--bogus"},
	} {
		if _, errs, code := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errs)
		}
	}
	if _, errs, code := cli(t, "repair", "--store", "embedded:"+t.TempDir()); code != 1 || !strings.Contains(errs, "no embedded store") {
		t.Errorf("directory without a store: exit %d, %q; want 1 and a message", code, errs)
	}
}

func TestRepairHealthy(t *testing.T) {
	dir, _ := repairKB(t)
	out, errs, code := cli(t, "repair", "--store", "embedded:"+dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(out, "healthy, nothing to repair (20 chunks)") != 2 {
		t.Errorf("output:\n%s", out)
	}
}

func TestRepairDamaged(t *testing.T) {
	dir, offs := repairKB(t)
	wal := filepath.Join(dir, "docs", "store.wal")
	b, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	b[offs[7]+20] ^= 0x10 // inside record 8 of docs
	os.WriteFile(wal, b, 0o644)

	// The damaged store does not open.
	if _, err := memstore.Open(context.Background(), memstore.Options{Dir: filepath.Join(dir, "docs")}); err == nil {
		t.Fatal("the damaged store opens")
	}
	// A dry run reports, exits 1, and changes nothing.
	out, _, code := cli(t, "repair", "--store", "embedded:"+dir, "--dry-run")
	if code != 1 || !strings.Contains(out, "would be repaired") {
		t.Errorf("dry run: exit %d:\n%s", code, out)
	}
	if after, _ := os.ReadFile(wal); string(after) != string(b) {
		t.Error("the dry run changed the log")
	}

	out, errs, code := cli(t, "repair", "--store", "embedded:"+dir, "--json")
	if code != 1 || !strings.Contains(errs, "could not be salvaged") {
		t.Errorf("exit %d (%s), want 1", code, errs)
	}
	var got struct {
		Stores []struct {
			Store       string            `json:"store"`
			Chunks      int               `json:"chunks"`
			RecordsKept int               `json:"records_kept"`
			LostRecords int               `json:"lost_records"`
			Rewritten   bool              `json:"rewritten"`
			SetAside    map[string]string `json:"set_aside"`
			Lost        []struct {
				File        string `json:"file"`
				Offset      int64  `json:"offset"`
				Bytes       int64  `json:"bytes"`
				FirstRecord int    `json:"first_record"`
			} `json:"lost"`
		} `json:"stores"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Stores) != 2 {
		t.Fatalf("%d stores reported, want 2:\n%s", len(got.Stores), out)
	}
	docs, faq := got.Stores[0], got.Stores[1]
	if docs.Store != "docs" || docs.Chunks != 19 || docs.RecordsKept != 19 || docs.LostRecords != 1 || !docs.Rewritten ||
		len(docs.Lost) != 1 || docs.Lost[0].Offset != offs[7] || docs.Lost[0].Bytes != offs[8]-offs[7] || docs.Lost[0].FirstRecord != 8 {
		t.Errorf("docs report:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "docs", docs.SetAside["store.wal"])); err != nil {
		t.Errorf("damaged log not kept aside: %v", err)
	}
	if faq.Store != "faq" || faq.Chunks != 20 || faq.Rewritten || faq.LostRecords != 0 {
		t.Errorf("faq report:\n%s", out)
	}
	// The store opens again; a second repair finds nothing to do.
	s, err := memstore.Open(context.Background(), memstore.Options{Dir: filepath.Join(dir, "docs")})
	if err != nil {
		t.Fatalf("after repair: %v", err)
	}
	s.Close()
	if out, errs, code := cli(t, "repair", "--store", "embedded:"+dir); code != 0 {
		t.Errorf("second repair: exit %d: %s%s", code, out, errs)
	}
	// One store directory can be named directly.
	if out, errs, code := cli(t, "repair", "--store", "embedded:"+filepath.Join(dir, "faq")); code != 0 || !strings.HasPrefix(out, "faq (") {
		t.Errorf("one store: exit %d: %s%s", code, out, errs)
	}
}

func TestRepairStoreInUse(t *testing.T) {
	dir, _ := repairKB(t)
	s, err := memstore.Open(context.Background(), memstore.Options{Dir: filepath.Join(dir, "docs")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, _, code := cli(t, "repair", "--store", "embedded:"+dir)
	if code != 1 || !strings.Contains(out, "not repaired") {
		t.Errorf("store in use: exit %d:\n%s", code, out)
	}
}
