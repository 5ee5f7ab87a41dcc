package records

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

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// fixture is the user's database every backend is tested with: orders
// (owner and tenant columns) and products.
var fixture = []string{
	`CREATE TABLE products (product_id TEXT PRIMARY KEY, name TEXT, warranty TEXT, price NUMERIC)`,
	`INSERT INTO products VALUES ('P-204', 'battery', '1 year', 199), ('P-205', 'charger', '2 years', 129)`,
	`CREATE TABLE orders (order_id TEXT PRIMARY KEY, tenant TEXT, owner TEXT, product TEXT, store TEXT, order_date DATE, refund NUMERIC)`,
	`INSERT INTO orders VALUES
		('A100', 'acme', 'u1', 'P-204', 'north', '2026-11-20', 0),
		('A101', 'acme', 'u1', 'P-205', 'north', '2026-12-01', 10.5),
		('A102', 'acme', 'u2', 'P-204', 'south', '2026-12-02', 199),
		('A103', 'acme', 'u1', 'P-204', 'south', '2026-12-31', 199),
		('B200', 'other', 'u1', 'P-204', 'north', '2026-12-05', 1000)`,
}

// schema is the declared schema of the fixture.
func schema() []ingest.TableSchema {
	return []ingest.TableSchema{
		{Table: "orders", Key: "order_id", Owner: "owner", Tenant: "tenant", Columns: []ingest.ColumnSchema{
			{Name: "order_id", Role: ingest.RoleKey, Filter: true}, {Name: "tenant"}, {Name: "owner"},
			{Name: "product", Filter: true}, {Name: "store", Role: ingest.RoleCategory, Filter: true},
			{Name: "order_date", Role: ingest.RoleDate, Filter: true}, {Name: "refund", Role: ingest.RoleNumber, Sum: true, Unit: "CNY"}}},
		{Table: "products", Key: "product_id", Columns: []ingest.ColumnSchema{
			{Name: "product_id", Role: ingest.RoleKey}, {Name: "name"}, {Name: "warranty"}, {Name: "price", Role: ingest.RoleNumber}}},
	}
}

// backends returns the URL of the fixture in each database: a SQLite file,
// and PostgreSQL when ADAPTRAG_TEST_POSTGRES names one (a schema of its
// own, dropped at the end).
func backends(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := filepath.Join(t.TempDir(), "user.db")
	w, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range fixture {
		if _, err := w.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	out["sqlite"] = "sqlite:" + p
	url := os.Getenv("ADAPTRAG_TEST_POSTGRES")
	if url == "" {
		if os.Getenv("ADAPTRAG_REQUIRE_POSTGRES") == "1" {
			t.Fatal("ADAPTRAG_REQUIRE_POSTGRES=1 but ADAPTRAG_TEST_POSTGRES is unset")
		}
		t.Log("ADAPTRAG_TEST_POSTGRES is unset: PostgreSQL not tested (scripts/postgres.sh starts one)")
		return out
	}
	pg, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "records_" + hex.EncodeToString(b)
	if _, err := pg.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pg.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
		pg.Close()
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	url += sep + "search_path=" + name
	in, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for _, st := range fixture {
		if _, err := in.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	out["postgres"] = url
	return out
}

func open(t *testing.T, url string, cfg Config) *DB {
	t.Helper()
	if cfg.Tables == nil {
		cfg.Tables = schema()
	}
	cfg.Tenant = "acme" // the tenant of the tables without a tenant column (products)
	db, err := Open(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var acme = retrieval.Scope{Tenant: "acme"}

func TestSuite(t *testing.T) {
	for name, url := range backends(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t, url, Config{})
			ctx := context.Background()
			t.Run("lookup", func(t *testing.T) {
				r, err := db.Get(ctx, acme, "u1", "orders", "a100")
				if err != nil || r.Key != "A100" || r.Fields["product"] != "P-204" || r.Fields["order_date"] != "2026-11-20" {
					t.Fatalf("Get = %+v, %v", r, err)
				}
				p, err := db.Get(ctx, acme, "", "products", "P-205")
				if err != nil || p.Fields["warranty"] != "2 years" {
					t.Fatalf("a product (no owner column) for the default... %+v %v", p, err)
				}
			})
			t.Run("chain", func(t *testing.T) {
				var rel []ingest.Relation
				for _, s := range db.Tables() {
					if s.Table == "orders" {
						rel = s.Relations
					}
				}
				if len(rel) != 0 {
					// Declared schemas carry no values: relations are declared.
					t.Logf("relations %v", rel)
				}
				r, err := db.Get(ctx, acme, "u1", "orders", "A103")
				if err != nil {
					t.Fatal(err)
				}
				p, err := db.Get(ctx, acme, "", "products", r.Fields["product"])
				if err != nil || p.Fields["name"] != "battery" {
					t.Fatalf("order -> product: %+v %v", p, err)
				}
			})
			t.Run("total", func(t *testing.T) {
				q := Query{Table: "orders", Op: "sum", Column: "refund", Filters: []Filter{{Column: "product", Value: "p-204"}},
					DateColumn: "order_date", From: "2026-12-01", To: "2027-01-01"}
				res, err := db.Total(ctx, acme, "u1", q)
				// u1's acme orders of P-204 in December: A103 only (A102 is u2's, B200 another tenant's).
				if err != nil || res.Value != 199 || res.Count != 1 || len(res.Rows) != 1 || res.Rows[0].Key != "A103" || res.Unit != "CNY" || !res.OwnerOnly {
					t.Fatalf("Total = %+v, %v", res, err)
				}
				res, err = db.Total(ctx, acme, "u1", Query{Table: "orders", Op: "count"})
				if err != nil || res.Value != 3 || res.Count != 3 {
					t.Fatalf("count = %+v, %v", res, err)
				}
				res, err = db.Total(ctx, acme, "u1", Query{Table: "orders", Op: "sum", Column: "refund"})
				if err != nil || res.Value != 209.5 {
					t.Fatalf("sum with a fraction = %+v, %v", res, err)
				}
				if s := q.String(); s != "sum(refund) over orders where product = p-204 and order_date in 2026-12-01..2026-12-31" {
					t.Errorf("query as rendered: %s", s)
				}
			})
			t.Run("row limit", func(t *testing.T) {
				small := open(t, url, Config{MaxRows: 2})
				res, err := small.Total(ctx, acme, "u1", Query{Table: "orders", Op: "count"})
				if err != nil || res.Value != 3 || len(res.Rows) != 2 || !res.Truncated {
					t.Fatalf("count over 3 rows, 2 returned: %+v %v", res, err)
				}
			})
			t.Run("permission", func(t *testing.T) {
				if _, err := db.Get(ctx, acme, "u2", "orders", "A100"); !errors.Is(err, retrieval.ErrNotPermitted) {
					t.Errorf("another actor's order: %v", err)
				}
				if _, err := db.Get(ctx, acme, "", "orders", "A100"); !errors.Is(err, retrieval.ErrNotPermitted) {
					t.Errorf("no actor: %v", err)
				}
				if _, err := db.Get(ctx, acme, "u1", "orders", "B200"); !errors.Is(err, retrieval.ErrNotFound) {
					t.Errorf("another tenant's order: %v", err)
				}
				if _, err := db.Get(ctx, retrieval.Scope{Tenant: "other"}, "u1", "products", "P-204"); !errors.Is(err, retrieval.ErrNotFound) {
					t.Errorf("products belong to acme, not other: %v", err)
				}
				res, err := db.Total(ctx, acme, "", Query{Table: "orders", Op: "count"})
				if err != nil || res.Value != 0 {
					t.Errorf("count with no actor: %+v %v", res, err)
				}
				res, err = db.Total(ctx, retrieval.Scope{Tenant: "other"}, "u1", Query{Table: "orders", Op: "sum", Column: "refund"})
				if err != nil || res.Value != 1000 || res.Count != 1 {
					t.Errorf("the other tenant's own total: %+v %v", res, err)
				}
			})
			t.Run("bad input", func(t *testing.T) {
				for _, id := range []string{"A100' OR '1'='1", "A100; DROP TABLE orders", `A100" --`, "%", "_100"} {
					if _, err := db.Get(ctx, acme, "u1", "orders", id); !errors.Is(err, retrieval.ErrNotFound) {
						t.Errorf("Get(%q) = %v, want no record", id, err)
					}
				}
				for _, id := range []string{strings.Repeat("A", 10_000), "A1\xff\xfe", "A\x00100"} {
					if _, err := db.Get(ctx, acme, "u1", "orders", id); !errors.Is(err, retrieval.ErrInvalid) {
						t.Errorf("Get(%.20q) = %v, want invalid", id, err)
					}
				}
				for _, q := range []Query{
					{Table: "orders", Op: "sum", Column: "store"},
					{Table: "orders", Op: "sum", Column: "refund; DROP TABLE orders"},
					{Table: "orders", Op: "count", Filters: []Filter{{Column: "owner", Value: "u2"}}},
					{Table: "orders", Op: "count", Filters: []Filter{{Column: "nope", Value: "x"}}},
					{Table: "orders", Op: "avg", Column: "refund"},
					{Table: "nope", Op: "count"},
					{Table: "orders", Op: "count", DateColumn: "order_date", From: "2026-12-01'--", To: "2027-01-01"},
					{Table: "orders", Op: "count", Filters: []Filter{{Column: "store", Value: "\xff"}}},
				} {
					if _, err := db.Total(ctx, acme, "u1", q); !errors.Is(err, retrieval.ErrInvalid) {
						t.Errorf("Total(%+v) = %v, want invalid", q, err)
					}
				}
				// Nothing was dropped.
				if _, err := db.Get(ctx, acme, "u1", "orders", "A100"); err != nil {
					t.Errorf("after bad input: %v", err)
				}
			})
			t.Run("timeout", func(t *testing.T) {
				slow := open(t, url, Config{Timeout: time.Nanosecond})
				_, err := slow.Get(ctx, acme, "u1", "orders", "A100")
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, retrieval.ErrNotFound) {
					t.Errorf("Get under a 1ns timeout = %v, want a timeout, not no record", err)
				}
				_, err = slow.Total(ctx, acme, "u1", Query{Table: "orders", Op: "count"})
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Total under a 1ns timeout = %v", err)
				}
			})
			t.Run("read only", func(t *testing.T) {
				err := db.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, `DELETE FROM orders`)
					return err
				})
				if err == nil {
					t.Error("a write went through the read-only connection")
				}
			})
		})
	}
}

func TestOpenRefusesBadDeclarations(t *testing.T) {
	url := backends(t)["sqlite"]
	ctx := context.Background()
	if _, err := Open(ctx, url, Config{}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("no schema: %v", err)
	}
	bad := schema()
	bad[1].Columns = append(bad[1].Columns, ingest.ColumnSchema{Name: "colour"})
	if _, err := Open(ctx, url, Config{Tables: bad}); !errors.Is(err, ingest.ErrSchema) {
		t.Errorf("a declared column the table lacks: %v", err)
	}
	for _, u := range []string{"mysql://x", "nothing", "sqlite:a?b"} {
		if _, err := Open(ctx, u, Config{Tables: schema()}); !errors.Is(err, ErrURL) {
			t.Errorf("Open(%q) = %v", u, err)
		}
	}
	if _, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "missing.db"), Config{Tables: schema()}); err == nil {
		t.Error("a missing SQLite file opened")
	}
}
