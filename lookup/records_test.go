package lookup_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// ingested copies testdata/kb to a temporary folder, ingests it into a
// knowledge base whose tables go to a records database, and returns the
// folder, the knowledge base's folder and the database.
func ingested(t *testing.T, now time.Time) (src, dir string, db *records.DB) {
	t.Helper()
	src, dir = t.TempDir(), t.TempDir()
	files, _ := os.ReadDir("testdata/kb")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata/kb", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, f.Name()), b, 0o644)
	}
	db = ingestInto(t, src, dir, now, false)
	return src, dir, db
}

func ingestInto(t *testing.T, src, dir string, now time.Time, prune bool) *records.DB {
	t.Helper()
	ctx := context.Background()
	docs, err := memstore.Open(ctx, memstore.Options{Dir: filepath.Join(dir, "docs")})
	if err != nil {
		t.Fatal(err)
	}
	defer docs.Close()
	w, err := records.OpenKB(ctx, dir, records.Config{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Ingest(ctx, ingest.Target{Docs: docs, Tables: w}, []string{src}, ingest.Options{Prune: prune, Embedder: embed.NewHashing(embed.HashingConfig{})})
	if err == nil {
		err = rep.Err()
	}
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := records.OpenKB(ctx, dir, records.Config{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newRecords(t *testing.T, db *records.DB) *lookup.Records {
	t.Helper()
	l, err := lookup.NewRecords(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var march = time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC)

func TestRecordsLookupAndChain(t *testing.T) {
	_, _, db := ingested(t, march)
	l := newRecords(t, db)
	ctx := context.Background()
	refs := l.Refs("Which recovery window applies to account AC-7731's plan?")
	if len(refs) != 1 || refs[0] != (lookup.Ref{Kind: "account", ID: "AC-7731"}) {
		t.Fatalf("refs: %+v", refs)
	}
	r, err := l.Get(ctx, retrieval.Scope{}, "", "account", "ac-7731")
	if err != nil || r.Fields["plan"] != "Team" || r.Origin != "accounts.csv" || r.Locator != "row 2" {
		t.Fatalf("AC-7731: %+v %v", r, err)
	}
	rel := l.Related("account")
	if rel["plan"] != "plan" {
		t.Fatalf("account relations: %v", rel)
	}
	p, err := l.Get(ctx, retrieval.Scope{}, "", rel["plan"], r.Fields["plan"])
	if err != nil || p.Fields["recovery_window"] != "30 days" {
		t.Fatalf("the plan of AC-7731: %+v %v", p, err)
	}
	// A record that does not exist, shaped like the table's keys, is named
	// as such and found as nothing.
	refs = l.Refs("病历号 HZ-9999 的种植体保修期是多久？")
	if len(refs) != 1 || refs[0] != (lookup.Ref{Kind: "patient", ID: "HZ-9999"}) {
		t.Fatalf("refs of a missing record: %+v", refs)
	}
	if _, err := l.Get(ctx, retrieval.Scope{}, "p1", "patient", "HZ-9999"); !errors.Is(err, retrieval.ErrNotFound) {
		t.Errorf("HZ-9999: %v", err)
	}
	if _, err := l.Get(ctx, retrieval.Scope{}, "p1", "patient", "HZ-6021"); !errors.Is(err, retrieval.ErrNotPermitted) {
		t.Errorf("another patient's record: %v", err)
	}
	if _, err := l.Get(ctx, retrieval.Scope{Tenant: "acme"}, "", "account", "AC-7731"); !errors.Is(err, retrieval.ErrNotFound) {
		t.Errorf("another tenant: %v", err)
	}
	if refs := l.Refs("what does tier-1 support cover?"); len(refs) != 0 {
		t.Errorf("an id of no table's shape: %+v", refs)
	}
}

func TestRecordsAggregate(t *testing.T) {
	_, _, db := ingested(t, march)
	l := newRecords(t, db)
	ctx := context.Background()
	for _, tt := range []struct {
		q     string
		value float64
		rows  int
		query string
	}{
		{"2026年3月城北店一共退费多少元？", 1500.5, 2, "sum(金额（元）) over 退费 where 门店 = 城北店 and 日期 in 2026-03-01..2026-03-31"},
		{"这个月城南店的退费总额", 800, 1, "sum(金额（元）) over 退费 where 门店 = 城南店 and 日期 in 2026-03-01..2026-03-31"},
		{"今年一共有多少笔退费记录？", 5, 5, "count(*) over 退费 where 日期 in 2026-01-01..2026-12-31"},
		{"How many accounts are on the Team plan?", 2, 2, "count(*) over account where plan = Team"},
		{"What is the total of seats over all accounts?", 320, 3, "sum(seats) over account"},
		{"病历号 HZ-3307 一共退费多少元？", 1170, 3, "sum(金额（元）) over 退费 where 病历号 = HZ-3307"},
	} {
		a, err := l.Aggregate(ctx, retrieval.Scope{}, "", tt.q)
		if err != nil || a.Value != tt.value || a.Rows != tt.rows || len(a.Records) != tt.rows || a.Query != tt.query {
			t.Errorf("%s: %+v %v, want %v over %d rows (%s)", tt.q, a, err, tt.value, tt.rows, tt.query)
		}
	}
	// The patients' table has an owner column: only the caller's rows count.
	a, err := l.Aggregate(ctx, retrieval.Scope{}, "p1", "How many patient records are there?")
	if err != nil || a.Value != 1 || !strings.Contains(a.Query, "readable by the caller") {
		t.Errorf("owner-only count: %+v %v", a, err)
	}
	for _, q := range []string{"城北店和城南店一共退费多少元？", "what is the plan of AC-7731?"} {
		if _, err := l.Aggregate(ctx, retrieval.Scope{}, "", q); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want unsupported", q, err)
		}
	}
}

// Re-ingesting a changed table replaces it; a deleted file's tables go
// with it when pruned.
func TestRecordsFollowIngestion(t *testing.T) {
	src, dir, _ := ingested(t, march)
	os.WriteFile(filepath.Join(src, "accounts.csv"), []byte("account_id,company,plan,seats\nAC-7731,Northwind,Enterprise,12\n"), 0o644)
	os.Remove(filepath.Join(src, "refunds.csv"))
	db := ingestInto(t, src, dir, march, true)
	l := newRecords(t, db)
	ctx := context.Background()
	if r, err := l.Get(ctx, retrieval.Scope{}, "", "account", "AC-7731"); err != nil || r.Fields["plan"] != "Enterprise" {
		t.Errorf("replaced table: %+v %v", r, err)
	}
	if _, err := l.Get(ctx, retrieval.Scope{}, "", "account", "AC-1204"); !errors.Is(err, retrieval.ErrNotFound) {
		t.Errorf("a row of the old version: %v", err)
	}
	for _, s := range db.Tables() {
		if s.Table == "退费" {
			t.Errorf("the pruned file's table is still there")
		}
	}
	if len(db.Tables()) != 3 {
		t.Errorf("tables: %d, want accounts, plans, patients", len(db.Tables()))
	}
}

// A sidecar that names a column the table lacks fails the file, not the run.
func TestRecordsBadSidecar(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.csv"), []byte("id,x\nA1,1\n"), 0o644)
	os.WriteFile(filepath.Join(src, "a.schema.json"), []byte(`{"owner":"nobody"}`), 0o644)
	ctx := context.Background()
	docs, _ := memstore.Open(ctx, memstore.Options{})
	defer docs.Close()
	w, err := records.OpenKB(ctx, dir, records.Config{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rep, err := ingest.Ingest(ctx, ingest.Target{Docs: docs, Tables: w}, []string{src}, ingest.Options{Embedder: embed.NewHashing(embed.HashingConfig{})})
	if err != nil || len(rep.Errors) != 1 || !errors.Is(rep.Errors[0].Err, ingest.ErrSchema) {
		t.Fatalf("report %+v, %v", rep, err)
	}
}
