package samplekb

import (
	"context"
	"embed"
	"io/fs"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
)

//go:embed tables
var tables embed.FS

// Today is the day the sample's orders are as of: the sample's look-up
// counts "this month" from it, so its examples stay reproducible.
var Today = time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)

// Tables is the sample's structured data as files: orders.csv and
// products.csv, each with its schema sidecar (orders.schema.json: the
// owner column, aliases and units).
func Tables() fs.FS {
	sub, err := fs.Sub(tables, "tables")
	if err != nil {
		panic("samplekb: " + err.Error()) // the embedded folder exists
	}
	return sub
}

// Records loads the sample's tables into an in-memory records database,
// the way ingestion loads any knowledge base's tables, with its clock
// fixed to Today. The caller closes it.
func Records(ctx context.Context) (*records.DB, error) {
	db, err := records.OpenKB(ctx, "", records.Config{Now: func() time.Time { return Today }})
	if err != nil {
		return nil, err
	}
	fsys := Tables()
	for _, name := range []string{"orders.csv", "products.csv"} {
		b, err := fs.ReadFile(fsys, name)
		if err == nil {
			var doc ingest.Document
			if doc, err = ingest.Parse(name, b, ingest.Options{}); err == nil {
				var ts []ingest.SchemaTable
				if ts, err = ingest.SchemaTables(doc, fsys); err == nil {
					err = db.ReplaceTables(ctx, retrieval.Scope{}, ingest.DocID(name), ts)
				}
			}
		}
		if err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// Lookup returns the sample's structured data: orders (each readable only
// by its owner, the actor u1 to u4) and products, for questions that depend
// on a record ("订单 A100 的产品适用哪份特殊规则") or need a total over every
// record ("这个月所有 P-204 订单的退款总额"), through the same records path as
// any knowledge base's tables. Its clock is fixed to Today. It panics only
// if the embedded tables fail to load, which the package's tests rule out.
func Lookup() *lookup.Records {
	ctx := context.Background()
	db, err := Records(ctx)
	if err == nil {
		var l *lookup.Records
		if l, err = lookup.NewRecords(ctx, db); err == nil {
			return l
		}
	}
	panic("samplekb: " + err.Error())
}
