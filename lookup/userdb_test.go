package lookup_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
)

// userFixture is a user's own database: accounts (tenant and owner
// columns) and the plans they are on.
var userFixture = []string{
	`CREATE TABLE plans (plan_code TEXT, recovery_window TEXT, seats_max INTEGER)`,
	`INSERT INTO plans VALUES ('PL-TEAM', '30 days', 50), ('PL-ENT', '90 days', 5000)`,
	`CREATE TABLE accounts (account_id TEXT, tenant TEXT, owner TEXT, plan_code TEXT, region TEXT, opened DATE, mrr NUMERIC)`,
	`INSERT INTO accounts VALUES
		('AC-7731', 'acme', 'u1', 'PL-TEAM', 'emea', '2026-03-02', 120.50),
		('AC-7732', 'acme', 'u1', 'PL-ENT', 'emea', '2026-03-20', 900),
		('AC-7733', 'acme', 'u2', 'PL-TEAM', 'apac', '2026-03-21', 80),
		('AC-7734', 'acme', 'u1', 'PL-TEAM', 'emea', '2026-02-10', 60),
		('AC-9001', 'other', 'u1', 'PL-TEAM', 'emea', '2026-03-05', 10000)`,
}

const userSchema = `{"tables": [
 {"table": "accounts", "aliases": ["account", "accounts", "账户"], "key": "account_id", "owner": "owner", "tenant": "tenant",
  "columns": [{"name": "account_id"}, {"name": "tenant"}, {"name": "owner"}, {"name": "plan_code", "filter": true},
   {"name": "region", "role": "category", "filter": true}, {"name": "opened", "role": "date"},
   {"name": "mrr", "role": "number", "sum": true, "unit": "EUR", "aliases": ["monthly revenue", "mrr"]}],
  "relations": [{"column": "plan_code", "table": "plans"}]},
 {"table": "plans", "aliases": ["plan", "plans"], "key": "plan_code",
  "columns": [{"name": "plan_code"}, {"name": "recovery_window"}, {"name": "seats_max", "role": "number"}]}]}`

// userDBs returns the fixture's URL in SQLite and, when
// ADAPTRAG_TEST_POSTGRES is set, in a PostgreSQL schema of its own.
func userDBs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := filepath.Join(t.TempDir(), "user.db")
	load := func(driver, dsn string) {
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, st := range userFixture {
			if _, err := db.Exec(st); err != nil {
				t.Fatal(err)
			}
		}
	}
	load("sqlite", "file:"+p)
	out["sqlite"] = "sqlite:" + p
	url := os.Getenv("ADAPTRAG_TEST_POSTGRES")
	if url == "" {
		if os.Getenv("ADAPTRAG_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ADAPTRAG_REQUIRE_POSTGRES=1 but ADAPTRAG_TEST_POSTGRES is unset")
		}
		t.Log("ADAPTRAG_TEST_POSTGRES is unset: PostgreSQL not tested (scripts/postgres.sh starts one)")
		return out
	}
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "lookup_" + hex.EncodeToString(b)
	if _, err := admin.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
		admin.Close()
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	url += sep + "search_path=" + name
	load("pgx", url)
	out["postgres"] = url
	return out
}

// One suite over the user's database, SQLite and PostgreSQL alike: the
// questions a user asks, mapped to look-ups, chains and totals.
func TestUserDatabase(t *testing.T) {
	tables, err := records.ParseSchemaFile(strings.NewReader(userSchema))
	if err != nil {
		t.Fatal(err)
	}
	march := func() time.Time { return time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC) }
	acme := retrieval.Scope{Tenant: "acme"}
	for name, url := range userDBs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, err := records.Open(ctx, url, records.Config{Tables: tables, Tenant: "acme", Now: march})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			l, err := lookup.NewRecords(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			// Look-up and chain: account -> plan.
			refs := l.Refs("Which recovery window applies to account AC-7731's plan?")
			if len(refs) != 1 || refs[0] != (lookup.Ref{Kind: "accounts", ID: "AC-7731"}) {
				t.Fatalf("refs: %+v", refs)
			}
			a, err := l.Get(ctx, acme, "u1", "accounts", "AC-7731")
			if err != nil || a.Fields["mrr"] == "" {
				t.Fatalf("AC-7731: %+v %v", a, err)
			}
			p, err := l.Get(ctx, acme, "", l.Related("accounts")["plan_code"], a.Fields["plan_code"])
			if err != nil || p.Fields["recovery_window"] != "30 days" {
				t.Fatalf("the plan: %+v %v", p, err)
			}
			// Totals over every row the caller may read.
			for _, tt := range []struct {
				q     string
				actor string
				value float64
				rows  int
			}{
				{"What is the total monthly revenue of emea accounts this month?", "u1", 1020.5, 2},
				{"How many accounts are on PL-TEAM?", "u1", 2, 2},
				{"账户 mrr 一共多少欧元？", "u2", 80, 1},
				{"How many accounts are on PL-TEAM?", "", 0, 0},
			} {
				agg, err := l.Aggregate(ctx, acme, tt.actor, tt.q)
				if err != nil || agg.Value != tt.value || agg.Rows != tt.rows {
					t.Errorf("%s as %q: %+v %v, want %v over %d", tt.q, tt.actor, agg, err, tt.value, tt.rows)
				}
			}
			// Permission, and ids no record has.
			if _, err := l.Get(ctx, acme, "u2", "accounts", "AC-7731"); !errors.Is(err, retrieval.ErrNotPermitted) {
				t.Errorf("another owner: %v", err)
			}
			if _, err := l.Get(ctx, acme, "u1", "accounts", "AC-9001"); !errors.Is(err, retrieval.ErrNotFound) {
				t.Errorf("another tenant: %v", err)
			}
			for _, id := range []string{"AC-0000", "AC-7731' OR '1'='1", "x'); DROP TABLE accounts; --"} {
				if _, err := l.Get(ctx, acme, "u1", "accounts", id); !errors.Is(err, retrieval.ErrNotFound) {
					t.Errorf("%q: %v", id, err)
				}
			}
			if _, err := l.Get(ctx, acme, "u1", "accounts", "AC-\xff"); !errors.Is(err, retrieval.ErrInvalid) {
				t.Errorf("invalid UTF-8: %v", err)
			}
			if _, err := l.Aggregate(ctx, acme, "u1", "How many accounts are in emea and apac?"); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("two values of one column: %v", err)
			}
			// A statement timeout is an error, never "no record".
			slow, err := records.Open(ctx, url, records.Config{Tables: tables, Tenant: "acme", Timeout: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			defer slow.Close()
			if _, err := lookup.NewRecords(ctx, slow); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("reading filter values under a 1ns timeout: %v", err)
			}
			if _, err := slow.Get(ctx, acme, "u1", "accounts", "AC-7731"); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, retrieval.ErrNotFound) {
				t.Errorf("timeout: %v", err)
			}
		})
	}
}
