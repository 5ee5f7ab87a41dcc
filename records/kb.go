package records

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// FileName is the name of a knowledge base's records database in its
// folder.
const FileName = "records.db"

// catalogue is the table listing the loaded tables.
const catalogue = "adaptrag_tables"

var _ ingest.TableWriter = (*DB)(nil)

// Exists reports whether the knowledge base folder dir holds a records
// database.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, FileName))
	return err == nil
}

// OpenKB opens the records database of the knowledge base in folder dir
// (dir/records.db): read-only, or for ingestion with cfg.Create (created
// when missing). An empty dir opens a new database in memory, for a
// knowledge base built in memory (the bundled sample). Without Create a
// missing database is retrieval.ErrNotFound.
func OpenKB(ctx context.Context, dir string, cfg Config) (*DB, error) {
	var dsn string
	if dir == "" {
		dsn = "file::memory:"
		cfg.Create = true
	} else {
		p := filepath.Join(dir, FileName)
		if !cfg.Create {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("records: %s: %w: %w", p, retrieval.ErrNotFound, err)
			}
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		var err error
		if dsn, err = sqliteDSN(p, cfg.Create); err != nil {
			return nil, err
		}
	}
	drv, err := driverFor("sqlite:")
	if err != nil {
		return nil, err
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	if dir == "" {
		// One connection: an in-memory database lives and dies with it.
		sdb.SetMaxOpenConns(1)
		sdb.SetMaxIdleConns(1)
		sdb.SetConnMaxLifetime(0)
	}
	d := &DB{db: sdb, drv: drv, cfg: cfg, kb: true}
	if cfg.Create {
		if _, err := sdb.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil && dir != "" {
			sdb.Close()
			return nil, d.mapErr(ctx, err)
		}
		if _, err := sdb.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+catalogue+` (
			name TEXT PRIMARY KEY, tenant TEXT NOT NULL, doc_id TEXT NOT NULL, position INTEGER NOT NULL,
			origin TEXT NOT NULL, schema TEXT NOT NULL)`); err != nil {
			sdb.Close()
			return nil, d.mapErr(ctx, err)
		}
	}
	if err := d.reload(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return d, nil
}

// reload reads the catalogue and relates its tables.
func (d *DB) reload(ctx context.Context) error {
	var tables []*table
	err := d.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name, tenant, origin, schema FROM `+catalogue+` ORDER BY origin, doc_id, position`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, tenant, origin, js string
			if err := rows.Scan(&name, &tenant, &origin, &js); err != nil {
				return err
			}
			var s ingest.TableSchema
			if err := json.Unmarshal([]byte(js), &s); err != nil {
				return fmt.Errorf("records: catalogue entry %s: %w: %w", name, retrieval.ErrCorrupt, err)
			}
			tables = append(tables, kbTable(name, tenant, origin, s))
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("records: read the catalogue: %w", err)
	}
	schemas := make([]ingest.TableSchema, len(tables))
	for i, t := range tables {
		schemas[i] = t.schema
		schemas[i].Relations = nil
	}
	ingest.Relate(schemas)
	for i, t := range tables {
		if t.schema.Relations == nil {
			t.schema.Relations = schemas[i].Relations
		}
	}
	d.mu.Lock()
	d.tables = tables
	d.mu.Unlock()
	return nil
}

// kbTable maps a loaded table's columns: column i is c<i> (text), with
// n<i> (its number) for a numeric column and d<i> (YYYY-MM-DD) for a date.
func kbTable(name, tenant, origin string, s ingest.TableSchema) *table {
	t := &table{schema: s, sql: quote(name), tenant: tenant, text: map[string]string{}, num: map[string]string{}, date: map[string]string{},
		locCol: "_locator", origin: origin}
	for i, c := range s.Columns {
		n := strconv.Itoa(i)
		t.text[c.Name] = "c" + n
		if c.Role == ingest.RoleNumber {
			t.num[c.Name] = "n" + n
		}
		if c.Role == ingest.RoleDate {
			t.date[c.Name] = "d" + n
		}
	}
	return t
}

// ReplaceTables implements ingest.TableWriter: in one transaction it drops
// the tables loaded from docID for the scope's tenant and loads tables in
// their place.
func (d *DB) ReplaceTables(ctx context.Context, scope retrieval.Scope, docID string, tables []ingest.SchemaTable) error {
	if !d.kb || !d.cfg.Create {
		return fmt.Errorf("records: the database is open for reading: %w", retrieval.ErrInvalid)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.mapErr(ctx, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	old, err := tx.QueryContext(ctx, `SELECT name FROM `+catalogue+` WHERE tenant = ? AND doc_id = ?`, scope.Tenant, docID)
	if err != nil {
		return d.mapErr(ctx, err)
	}
	var names []string
	for old.Next() {
		var n string
		if err := old.Scan(&n); err != nil {
			old.Close()
			return d.mapErr(ctx, err)
		}
		names = append(names, n)
	}
	old.Close()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+quote(n)); err != nil {
			return d.mapErr(ctx, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+catalogue+` WHERE tenant = ? AND doc_id = ?`, scope.Tenant, docID); err != nil {
		return d.mapErr(ctx, err)
	}
	for i, st := range tables {
		if err := load(ctx, tx, scope.Tenant, docID, i, st); err != nil {
			return d.mapErr(ctx, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return d.mapErr(ctx, err)
	}
	return d.reload(ctx)
}

// load creates and fills one table inside tx.
func load(ctx context.Context, tx *sql.Tx, tenant, docID string, pos int, st ingest.SchemaTable) error {
	h := sha256.Sum256([]byte(tenant + "\x00" + docID + "\x00" + strconv.Itoa(pos)))
	name := "t_" + hex.EncodeToString(h[:10])
	s := st.Schema
	cols := []string{"_row INTEGER", "_locator TEXT"}
	ins := []string{"_row", "_locator"}
	for i, c := range s.Columns {
		n := strconv.Itoa(i)
		cols = append(cols, "c"+n+" TEXT")
		ins = append(ins, "c"+n)
		switch c.Role {
		case ingest.RoleNumber:
			cols, ins = append(cols, "n"+n+" REAL"), append(ins, "n"+n)
		case ingest.RoleDate:
			cols, ins = append(cols, "d"+n+" TEXT"), append(ins, "d"+n)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE `+quote(name)+` (`+strings.Join(cols, ", ")+`)`); err != nil {
		return err
	}
	if s.Key != "" {
		for i, c := range s.Columns {
			if c.Name == s.Key {
				if _, err := tx.ExecContext(ctx, `CREATE INDEX `+quote(name+"_key")+` ON `+quote(name)+` (UPPER(c`+strconv.Itoa(i)+`))`); err != nil {
					return err
				}
			}
		}
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ins)), ", ")
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO `+quote(name)+` (`+strings.Join(ins, ", ")+`) VALUES (`+marks+`)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for r, row := range st.Table.Rows {
		loc := row.Locator
		if loc == "" {
			loc = "row " + strconv.Itoa(r+1)
		}
		if st.Table.Locator != "" {
			loc = st.Table.Locator + " > " + loc
		}
		vals := []any{r, loc}
		for i, c := range s.Columns {
			v := ""
			if i < len(row.Cells) {
				v = strings.TrimSpace(row.Cells[i])
			}
			vals = append(vals, v)
			switch c.Role {
			case ingest.RoleNumber:
				if f, _, ok := ingest.ParseNumber(v); ok {
					vals = append(vals, f)
				} else {
					vals = append(vals, nil)
				}
			case ingest.RoleDate:
				if t, ok := ingest.ParseDate(v); ok {
					vals = append(vals, t.Format(time.DateOnly))
				} else {
					vals = append(vals, nil)
				}
			}
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			return err
		}
	}
	js, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+catalogue+` (name, tenant, doc_id, position, origin, schema) VALUES (?, ?, ?, ?, ?, ?)`,
		name, tenant, docID, pos, st.Origin, string(js))
	return err
}
