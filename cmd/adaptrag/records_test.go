package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// An ingested knowledge base answers look-ups, totals and "no record" from
// its own tables, through the records database ingestion wrote beside it.
func TestIngestedTablesAsRecords(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"shipments.csv": "shipment_id,depot,weight_kg,charge_eur,status,shipped_on\n" +
			"SH-1001,Harlow,4.2,11.40,Delivered,2026-03-03\n" +
			"SH-1002,Harlow,1.1,14.90,Delivered,2026-03-11\n" +
			"SH-1003,Brennock,2.0,9.75,Damaged,2026-03-12\n" +
			"SH-1004,Harlow,3.0,20.00,Delivered,2026-04-02\n",
		"policy.md": "# Claims\n\nDamaged parcels are refunded within 14 days.\n",
	})
	store := "embedded:" + filepath.Join(t.TempDir(), "kb")
	if _, errs, code := cli(t, "ingest", "--store", store, dir); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(store, "embedded:"), "records.db")); err != nil {
		t.Fatalf("no records database beside the store: %v", err)
	}
	ask := func(q string) map[string]any {
		t.Helper()
		out, errs, code := cli(t, "ask", "--store", store, "--json", q)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", q, code, errs)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := ask("What is the total charge of shipments from the Harlow depot in March 2026?")
	if a, _ := got["answer"].(string); !strings.Contains(a, "26.3") || !strings.Contains(a, "depot = Harlow") || !strings.Contains(a, " 2 ") {
		t.Errorf("total: %q", a)
	}
	got = ask("How many shipments are Delivered?")
	if a, _ := got["answer"].(string); !strings.Contains(a, "= 3") {
		t.Errorf("count: %q", a)
	}
	got = ask("What is the status of shipment SH-1003?")
	if a, _ := got["answer"].(string); !strings.Contains(a, "SH-1003") {
		t.Errorf("look-up: %q", a)
	}
	got = ask("What is the status of shipment SH-9999?")
	a, _ := got["answer"].(string)
	if !strings.Contains(a, "SH-9999") || strings.Contains(a, "SH-100") {
		t.Errorf("no record: %q", a)
	}
	if c, _ := got["citations"].([]any); len(c) != 0 {
		t.Errorf("a missing record was answered with evidence: %v", c)
	}
}

// --records reads the user's own database through the declared schema,
// with tenant and actor from the caller's flags.
func TestAskOwnDatabase(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "shop.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		`CREATE TABLE orders (order_id TEXT, tenant TEXT, owner TEXT, store TEXT, order_date TEXT, refund REAL)`,
		`INSERT INTO orders VALUES ('A1','acme','u1','north','2026-03-02',10), ('A2','acme','u2','north','2026-03-05',20),
			('A3','acme','u1','south','2026-03-09',5), ('A4','other','u1','north','2026-03-10',900)`,
	} {
		if _, err := db.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	schema := filepath.Join(dir, "schema.json")
	os.WriteFile(schema, []byte(`{"tables": [{"table": "orders", "aliases": ["order", "订单"], "key": "order_id", "owner": "owner", "tenant": "tenant",
		"columns": [{"name": "order_id"}, {"name": "tenant"}, {"name": "owner"}, {"name": "store", "filter": true},
		{"name": "order_date", "role": "date"}, {"name": "refund", "role": "number", "sum": true, "unit": "CNY", "aliases": ["退款"]}]}]}`), 0o644)
	out, errs, code := cli(t, "ask", "--records", "sqlite:"+p, "--records-schema", schema, "--tenant", "acme", "--actor", "u1", "--json",
		"north 门店的订单退款总额是多少？")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got map[string]any
	json.Unmarshal([]byte(out), &got)
	if a, _ := got["answer"].(string); !strings.Contains(a, "= 10 CNY") || !strings.Contains(a, "store = north") {
		t.Errorf("u1's north refunds in acme: %q", a)
	}
	out, _, _ = cli(t, "ask", "--records", "sqlite:"+p, "--records-schema", schema, "--tenant", "acme", "--actor", "u2", "--json", "订单 A1 是哪个门店的？")
	if !strings.Contains(out, `"not_permitted"`) && !strings.Contains(out, "not allowed") && !strings.Contains(out, "没有权限") {
		t.Errorf("another actor's order: %s", out)
	}
	for _, args := range [][]string{
		{"ask", "--records", "sqlite:" + p, "订单 A1"},
		{"ask", "--records-schema", schema, "订单 A1"},
		{"ask", "--records", "mysql://x", "--records-schema", schema, "订单 A1"},
	} {
		if _, _, code := cli(t, args...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
