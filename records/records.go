// Package records reads tables as records over database/sql: one row by
// its key, and totals or counts over every row a caller may read, each as
// one parameterised statement built by the program from a table's schema
// (ingest.TableSchema), never from text a model or a question supplies.
//
// Two kinds of database are served. A knowledge base's own database
// (OpenKB) is an embedded SQLite file in the knowledge base's folder into
// which ingestion loads every table it finds (ReplaceTables, one
// transaction per file), with the schema inferred from the values and the
// declarations of sidecar files. A user's own database (Open with a URL:
// "sqlite:PATH" through modernc.org/sqlite, "postgres://..." through
// github.com/jackc/pgx/v5) is read through a declared schema: only the
// tables and columns it names are ever queried.
//
// At question time every statement runs in a read-only transaction with a
// statement timeout (Config.Timeout; a timeout is an error wrapping
// context.DeadlineExceeded, never "no record"), returns at most
// Config.MaxRows rows, and is limited to the caller's scope: a table is
// readable by its tenant (a declared tenant column, else the tenant the
// table was loaded for), and when a table declares an owner column a row
// is readable only by the actor it names. Tenant and actor come from the
// caller, never from a question.
package records

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// Defaults of Config.
const (
	DefaultTimeout = 5 * time.Second
	DefaultMaxRows = 200
	// MaxValueLen bounds a key or filter value, in bytes.
	MaxValueLen = 256
)

// ErrURL reports a records URL whose scheme no driver is registered for,
// or that cannot be parsed.
var ErrURL = errors.New("records: bad database URL")

// Config configures Open and OpenKB. The zero value has no declared
// tables, DefaultTimeout, DefaultMaxRows, the default tenant "" for tables
// without a tenant column, and time.Now as the clock.
type Config struct {
	// Tables is the declared schema of a user's own database (Open): the
	// only tables and columns that are read. Ignored by OpenKB, whose
	// tables are described in its catalogue.
	Tables []ingest.TableSchema
	// Tenant owns the tables of a user's database that declare no tenant
	// column.
	Tenant string
	// Timeout bounds every statement; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRows is the most rows a statement returns (the evidence of a
	// total); 0 means DefaultMaxRows. Totals and counts are computed over
	// every row whatever the limit.
	MaxRows int
	// Now is the clock periods are computed from; nil means time.Now.
	Now func() time.Time
	// Create opens a knowledge base's database for writing (ingestion),
	// creating it when missing. Without it OpenKB needs an existing file
	// (retrieval.ErrNotFound otherwise) and opens it read-only.
	Create bool
}

// Dialect is how a driver's SQL differs from the common subset used here.
type Dialect struct {
	// Placeholder returns the n-th (1-based) parameter marker: "?" or "$n".
	Placeholder func(n int) string
	// Timeout returns the statement that sets a statement timeout inside
	// a transaction, or "" when the context deadline is the only one.
	Timeout func(d time.Duration) string
}

// Driver opens databases of one URL scheme.
type Driver struct {
	// SQLDriver is the database/sql driver name.
	SQLDriver string
	// DSN turns the URL into the driver's data source name, read-only.
	DSN func(url string) (string, error)
	// Dialect of the database.
	Dialect Dialect
	// Unavailable reports a driver error that means the database cannot
	// be reached; nil means none does.
	Unavailable func(error) bool
	// TimedOut reports a driver error that is a statement timeout.
	TimedOut func(error) bool
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a driver available for URLs of scheme ("sqlite",
// "postgres"), as sql.Register does for database/sql. Registering a
// scheme twice replaces it. It is safe for concurrent use.
func Register(scheme string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[scheme] = d
}

func driverFor(url string) (Driver, error) {
	scheme, _, ok := strings.Cut(url, ":")
	if !ok {
		return Driver{}, fmt.Errorf("%w: %q has no scheme (want sqlite:PATH or postgres://...)", ErrURL, url)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[scheme]
	if !ok {
		return Driver{}, fmt.Errorf("%w: no driver for %q (want sqlite:PATH or postgres://...)", ErrURL, scheme+":")
	}
	return d, nil
}

// Row is one record: a table's row with its provenance.
type Row struct {
	Table   string            // the table's name (its schema's Table)
	Key     string            // the row's key value
	Fields  map[string]string // column -> value, as text
	Origin  string            // the file or database table it came from
	Locator string            // where in it ("row 3", "id A100")
}

// table is one readable table: its schema and where its columns are.
type table struct {
	schema ingest.TableSchema
	sql    string            // quoted table name
	tenant string            // the tenant it belongs to when it has no tenant column
	text   map[string]string // column -> expression giving its value as text
	num    map[string]string // numeric column -> numeric expression
	date   map[string]string // date column -> expression giving YYYY-MM-DD text
	locCol string            // expression of the row's locator, "" for a user's table
	origin string
}

// DB is a records database. It is safe for concurrent use.
type DB struct {
	db      *sql.DB
	drv     Driver
	cfg     Config
	kb      bool // a knowledge base's own database (catalogued)
	mu      sync.RWMutex
	tables  []*table
	closeMu sync.Once
}

// Open opens a user's own database at url ("sqlite:PATH", or a
// PostgreSQL URL "postgres://user@host/db") read-only, to be read through
// cfg.Tables, which must name at least one table with a key or a numeric
// column. The database is reached once (retrieval.ErrUnavailable when it
// cannot be) and every declared table and column must exist in it.
func Open(ctx context.Context, url string, cfg Config) (*DB, error) {
	if len(cfg.Tables) == 0 {
		return nil, fmt.Errorf("records: %s: no declared tables (--records-schema): %w", redact(url), retrieval.ErrInvalid)
	}
	drv, err := driverFor(url)
	if err != nil {
		return nil, err
	}
	dsn, err := drv.DSN(url)
	if err != nil {
		return nil, err
	}
	sdb, err := sql.Open(drv.SQLDriver, dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	d := &DB{db: sdb, drv: drv, cfg: cfg}
	for _, s := range cfg.Tables {
		t, err := declaredTable(s, cfg.Tenant)
		if err != nil {
			sdb.Close()
			return nil, err
		}
		d.tables = append(d.tables, t)
	}
	schemas := d.Tables()
	ingest.Relate(schemas)
	for i, t := range d.tables {
		t.schema.Relations = schemas[i].Relations
	}
	if err := d.check(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return d, nil
}

// declaredTable checks a declared table and maps its columns.
func declaredTable(s ingest.TableSchema, tenant string) (*table, error) {
	if s.Table == "" || len(s.Columns) == 0 {
		return nil, fmt.Errorf("records: a declared table needs a name and columns: %w", ingest.ErrSchema)
	}
	if s.Key == "" && !anySum(s) {
		return nil, fmt.Errorf("records: table %q declares neither a key nor a column to sum: %w", s.Table, ingest.ErrSchema)
	}
	t := &table{schema: s, sql: quote(s.Table), tenant: tenant, text: map[string]string{}, num: map[string]string{}, date: map[string]string{}, origin: s.Table}
	for _, c := range s.Columns {
		if c.Name == "" || !utf8.ValidString(c.Name) || strings.ContainsRune(c.Name, 0) {
			return nil, fmt.Errorf("records: table %q: a bad column name: %w", s.Table, ingest.ErrSchema)
		}
		if c.Role != "" && c.Role != ingest.RoleKey && c.Role != ingest.RoleNumber && c.Role != ingest.RoleDate && c.Role != ingest.RoleCategory && c.Role != ingest.RoleText {
			return nil, fmt.Errorf("records: table %q column %q: unknown role %q: %w", s.Table, c.Name, c.Role, ingest.ErrSchema)
		}
		q := quote(c.Name)
		t.text[c.Name] = "CAST(" + q + " AS TEXT)"
		if c.Role == ingest.RoleNumber || c.Sum {
			t.num[c.Name] = q
		}
		if c.Role == ingest.RoleDate {
			t.date[c.Name] = "SUBSTR(CAST(" + q + " AS TEXT), 1, 10)"
		}
	}
	for _, col := range []string{s.Key, s.Owner, s.Tenant} {
		if col != "" && t.text[col] == "" {
			return nil, fmt.Errorf("records: table %q: column %q is not declared: %w", s.Table, col, ingest.ErrSchema)
		}
	}
	return t, nil
}

func anySum(s ingest.TableSchema) bool {
	for _, c := range s.Columns {
		if c.Sum || c.Role == ingest.RoleNumber {
			return true
		}
	}
	return false
}

// check reads nothing from every declared table, so that a missing table
// or column fails at start rather than at the first question.
func (d *DB) check(ctx context.Context) error {
	for _, t := range d.tables {
		var have []string
		// The check is not a question: it is not held to Config.Timeout.
		err := d.readWithin(ctx, max(d.cfg.Timeout, DefaultTimeout), func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, "SELECT * FROM "+t.sql+" WHERE 1 = 0")
			if err != nil {
				return err
			}
			defer rows.Close()
			have, err = rows.Columns()
			return err
		})
		if err != nil {
			if errors.Is(err, retrieval.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("records: table %q as declared: %w: %w", t.schema.Table, ingest.ErrSchema, err)
		}
		for _, c := range t.schema.Columns {
			if !slices.Contains(have, c.Name) {
				return fmt.Errorf("records: table %q has no column %q (it has %s): %w", t.schema.Table, c.Name, strings.Join(have, ", "), ingest.ErrSchema)
			}
		}
	}
	return nil
}

// Close releases the database.
func (d *DB) Close() error {
	var err error
	d.closeMu.Do(func() { err = d.db.Close() })
	return err
}

// Now is the database's clock, from which periods are computed.
func (d *DB) Now() time.Time {
	if d.cfg.Now != nil {
		return d.cfg.Now()
	}
	return time.Now()
}

// Tables returns the schemas of the readable tables (copies), with the
// relations between them.
func (d *DB) Tables() []ingest.TableSchema {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]ingest.TableSchema, len(d.tables))
	for i, t := range d.tables {
		out[i] = t.schema
	}
	return out
}

func (d *DB) find(name string) []*table {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []*table
	for _, t := range d.tables {
		if t.schema.Table == name {
			out = append(out, t)
		}
	}
	return out
}

// read runs f in a read-only transaction under the statement timeout and
// maps errors: a timeout wraps context.DeadlineExceeded, an unreachable
// database retrieval.ErrUnavailable.
func (d *DB) read(ctx context.Context, f func(context.Context, *sql.Tx) error) error {
	return d.readWithin(ctx, cmp.Or(d.cfg.Timeout, DefaultTimeout), f)
}

func (d *DB) readWithin(ctx context.Context, timeout time.Duration, f func(context.Context, *sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := func() error {
		tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
		if d.drv.Dialect.Timeout != nil {
			if st := d.drv.Dialect.Timeout(timeout); st != "" {
				if _, err := tx.ExecContext(ctx, st); err != nil {
					return err
				}
			}
		}
		return f(ctx, tx)
	}()
	return d.mapErr(ctx, err)
}

func (d *DB) mapErr(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, retrieval.ErrNotFound), errors.Is(err, retrieval.ErrNotPermitted), errors.Is(err, retrieval.ErrInvalid):
		return err
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded), d.drv.TimedOut != nil && d.drv.TimedOut(err):
		return fmt.Errorf("records: statement timeout: %w: %w", context.DeadlineExceeded, err)
	case ctx.Err() != nil:
		return fmt.Errorf("records: %w: %w", ctx.Err(), err)
	case d.drv.Unavailable != nil && d.drv.Unavailable(err):
		return fmt.Errorf("records: %w: %w", retrieval.ErrUnavailable, err)
	}
	return fmt.Errorf("records: %w", err)
}

// checkValue refuses a value no record can have: not UTF-8, a NUL byte,
// or longer than MaxValueLen.
func checkValue(what, v string) error {
	switch {
	case !utf8.ValidString(v):
		return fmt.Errorf("records: %s is not valid UTF-8: %w", what, retrieval.ErrInvalid)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("records: %s holds a NUL byte: %w", what, retrieval.ErrInvalid)
	case len(v) > MaxValueLen:
		return fmt.Errorf("records: %s is %d bytes, at most %d: %w", what, len(v), MaxValueLen, retrieval.ErrInvalid)
	}
	return nil
}

// args collects statement parameters and hands out their markers.
type args struct {
	d    Dialect
	vals []any
}

func (a *args) add(v any) string {
	a.vals = append(a.vals, v)
	return a.d.Placeholder(len(a.vals))
}

// scopeConds returns the conditions limiting t to what the caller may
// read, or ok false when the caller may read none of it.
func (t *table) scopeConds(a *args, scope retrieval.Scope, actor string, withOwner bool) (conds []string, ok bool) {
	if t.schema.Tenant != "" {
		conds = append(conds, t.text[t.schema.Tenant]+" = "+a.add(scope.Tenant))
	} else if t.tenant != scope.Tenant {
		return nil, false
	}
	if withOwner && t.schema.Owner != "" {
		if actor == "" {
			return nil, false
		}
		conds = append(conds, t.text[t.schema.Owner]+" = "+a.add(actor))
	}
	return conds, true
}

// columns returns the select list of t's columns as text, and the locator.
func (t *table) columns() string {
	cols := make([]string, 0, len(t.schema.Columns)+1)
	for _, c := range t.schema.Columns {
		cols = append(cols, t.text[c.Name])
	}
	if t.locCol != "" {
		cols = append(cols, t.locCol)
	} else {
		cols = append(cols, "''")
	}
	return strings.Join(cols, ", ")
}

// scanRows reads rows selected with columns().
func (t *table) scanRows(rows *sql.Rows, limit int) ([]Row, error) {
	defer rows.Close()
	var out []Row
	n := len(t.schema.Columns)
	for rows.Next() && len(out) < limit {
		vals := make([]sql.NullString, n+1)
		ptrs := make([]any, n+1)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := Row{Table: t.schema.Table, Fields: make(map[string]string, n), Origin: t.origin, Locator: vals[n].String}
		for i, c := range t.schema.Columns {
			r.Fields[c.Name] = vals[i].String
		}
		if t.schema.Key != "" {
			r.Key = r.Fields[t.schema.Key]
			if r.Locator == "" {
				r.Locator = t.schema.Key + " " + r.Key
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Get returns the row of table whose key is key (compared without regard
// to case). A table or row the caller's tenant cannot see is
// retrieval.ErrNotFound; a row whose declared owner is not actor is
// retrieval.ErrNotPermitted. A key that no record can have (invalid UTF-8,
// too long) is retrieval.ErrInvalid.
func (d *DB) Get(ctx context.Context, scope retrieval.Scope, actor, tableName, key string) (Row, error) {
	if err := checkValue("the key", key); err != nil {
		return Row{}, err
	}
	ts := d.find(tableName)
	if len(ts) == 0 {
		return Row{}, fmt.Errorf("records: no table %q: %w", tableName, retrieval.ErrNotFound)
	}
	var found []Row
	var denied bool
	for _, t := range ts {
		if t.schema.Key == "" {
			continue
		}
		a := &args{d: d.drv.Dialect}
		conds, ok := t.scopeConds(a, scope, actor, false)
		if !ok {
			continue
		}
		conds = append(conds, "UPPER("+t.text[t.schema.Key]+") = UPPER("+a.add(strings.TrimSpace(key))+")")
		stmt := "SELECT " + t.columns() + " FROM " + t.sql + " WHERE " + strings.Join(conds, " AND ") + " LIMIT 2"
		var rows []Row
		err := d.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
			rs, err := tx.QueryContext(ctx, stmt, a.vals...)
			if err != nil {
				return err
			}
			rows, err = t.scanRows(rs, 2)
			return err
		})
		if err != nil {
			return Row{}, fmt.Errorf("records: %s %s: %w", tableName, key, err)
		}
		for _, r := range rows {
			if t.schema.Owner != "" && (actor == "" || r.Fields[t.schema.Owner] != actor) {
				denied = true
				continue
			}
			found = append(found, r)
		}
	}
	switch {
	case len(found) > 0:
		return found[0], nil
	case denied:
		return Row{}, fmt.Errorf("records: %s %s: %w", tableName, key, retrieval.ErrNotPermitted)
	}
	return Row{}, fmt.Errorf("records: no record %s %s: %w", tableName, key, retrieval.ErrNotFound)
}

// Filter selects rows whose column equals a value (without regard to case).
type Filter struct {
	Column, Value string
}

// Query is a total or a count over a table, as the program builds it from
// the table's schema.
type Query struct {
	Table string
	// Op is "sum" or "count".
	Op string
	// Column is the column summed (a Sum column); "" for a count.
	Column  string
	Filters []Filter
	// DateColumn, From and To select rows dated From <= date < To
	// (YYYY-MM-DD); all empty for no period.
	DateColumn, From, To string
}

// String renders q as it runs, for a sub-task record and an answer:
// "sum(refund) over order where product = P-204 and order_date in
// 2026-12-01..2026-12-31".
func (q Query) String() string {
	what := "count(*)"
	if q.Op == "sum" {
		what = "sum(" + q.Column + ")"
	}
	var conds []string
	for _, f := range q.Filters {
		conds = append(conds, f.Column+" = "+f.Value)
	}
	if q.DateColumn != "" {
		last := q.To
		if t, err := time.Parse(time.DateOnly, q.To); err == nil {
			last = t.AddDate(0, 0, -1).Format(time.DateOnly)
		}
		conds = append(conds, q.DateColumn+" in "+q.From+".."+last)
	}
	s := what + " over " + q.Table
	if len(conds) > 0 {
		s += " where " + strings.Join(conds, " and ")
	}
	return s
}

// Total is the result of a Query.
type Total struct {
	Query Query
	Value float64 // the sum, or the count
	Unit  string  // of a sum, from the column's schema
	Count int     // rows counted
	// Rows are the rows counted, at most Config.MaxRows of them
	// (Truncated says there were more).
	Rows      []Row
	Truncated bool
	// OwnerOnly says the table has an owner column: only the caller's
	// rows were counted.
	OwnerOnly bool
}

// Total runs q as one parameterised statement over every row of the table
// the caller may read and returns the figure, the number of rows and (up
// to Config.MaxRows of) the rows themselves. A column the schema does not
// allow to be summed or filtered, an unknown table or column, or a bad
// value is retrieval.ErrInvalid.
func (d *DB) Total(ctx context.Context, scope retrieval.Scope, actor string, q Query) (Total, error) {
	ts := d.find(q.Table)
	if len(ts) == 0 {
		return Total{}, fmt.Errorf("records: no table %q: %w", q.Table, retrieval.ErrInvalid)
	}
	res := Total{Query: q}
	limit := cmp.Or(d.cfg.MaxRows, DefaultMaxRows)
	for _, t := range ts {
		a := &args{d: d.drv.Dialect}
		conds, ok := t.scopeConds(a, scope, actor, true)
		res.OwnerOnly = res.OwnerOnly || t.schema.Owner != ""
		if !ok {
			continue
		}
		var agg string
		switch q.Op {
		case "count":
			agg = "COUNT(*), '0'"
		case "sum":
			c := t.schema.Column(q.Column)
			num, isNum := t.num[q.Column]
			if c == nil || !isNum || !c.Sum && c.Role != ingest.RoleNumber {
				return Total{}, fmt.Errorf("records: %s.%s cannot be summed: %w", q.Table, q.Column, retrieval.ErrInvalid)
			}
			res.Unit = c.Unit
			agg = "COUNT(" + num + "), CAST(SUM(" + num + ") AS TEXT)"
		default:
			return Total{}, fmt.Errorf("records: unknown operation %q: %w", q.Op, retrieval.ErrInvalid)
		}
		for _, f := range q.Filters {
			c := t.schema.Column(f.Column)
			if c == nil || !c.Filter || f.Column == t.schema.Owner || f.Column == t.schema.Tenant {
				return Total{}, fmt.Errorf("records: %s.%s is not a filter: %w", q.Table, f.Column, retrieval.ErrInvalid)
			}
			if err := checkValue("a filter value", f.Value); err != nil {
				return Total{}, err
			}
			conds = append(conds, "UPPER("+t.text[f.Column]+") = UPPER("+a.add(f.Value)+")")
		}
		if q.DateColumn != "" {
			expr, ok := t.date[q.DateColumn]
			_, errFrom := time.Parse(time.DateOnly, q.From)
			_, errTo := time.Parse(time.DateOnly, q.To)
			if !ok || errFrom != nil || errTo != nil {
				return Total{}, fmt.Errorf("records: period %s..%s on %s.%s: %w", q.From, q.To, q.Table, q.DateColumn, retrieval.ErrInvalid)
			}
			conds = append(conds, expr+" >= "+a.add(q.From), expr+" < "+a.add(q.To))
		}
		where := ""
		if len(conds) > 0 {
			where = " WHERE " + strings.Join(conds, " AND ")
		}
		if q.Op == "sum" {
			// Rows without a value are not counted as summed.
			where += map[bool]string{true: " AND ", false: " WHERE "}[len(conds) > 0] + t.num[q.Column] + " IS NOT NULL"
		}
		err := d.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
			var n int
			var sum sql.NullString
			if err := tx.QueryRowContext(ctx, "SELECT "+agg+" FROM "+t.sql+where, a.vals...).Scan(&n, &sum); err != nil {
				return err
			}
			res.Count += n
			if q.Op == "sum" {
				if sum.Valid {
					v, err := strconv.ParseFloat(strings.TrimSpace(sum.String), 64)
					if err != nil {
						return fmt.Errorf("records: sum %q: %w", sum.String, err)
					}
					res.Value += v
				}
			} else {
				res.Value += float64(n)
			}
			if len(res.Rows) >= limit {
				res.Truncated = res.Truncated || n > 0
				return nil
			}
			order := ""
			if t.locCol != "" {
				order = " ORDER BY _row"
			} else if t.schema.Key != "" {
				order = " ORDER BY " + t.text[t.schema.Key]
			}
			rs, err := tx.QueryContext(ctx, "SELECT "+t.columns()+" FROM "+t.sql+where+order+" LIMIT "+strconv.Itoa(limit-len(res.Rows)+1), a.vals...)
			if err != nil {
				return err
			}
			rows, err := t.scanRows(rs, limit-len(res.Rows)+1)
			if err != nil {
				return err
			}
			if len(rows) > limit-len(res.Rows) {
				rows, res.Truncated = rows[:limit-len(res.Rows)], true
			}
			res.Rows = append(res.Rows, rows...)
			return nil
		})
		if err != nil {
			return Total{}, fmt.Errorf("records: %s: %w", q, err)
		}
	}
	return res, nil
}

// quote quotes an identifier for SQL (both SQLite and PostgreSQL).
func quote(id string) string {
	return `"` + strings.ReplaceAll(id, `"`, `""`) + `"`
}

// redact removes a password from a URL for messages.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			return scheme + "://" + user + ":***@" + rest[at+1:]
		}
	}
	return url
}

// Distinct returns the distinct values of a filter column (at most
// Config.MaxRows of them, as text), whatever the tenant: the words a
// question may use to filter on it. They are matched against questions,
// never shown.
func (d *DB) Distinct(ctx context.Context, tableName, column string) ([]string, error) {
	var out []string
	for _, t := range d.find(tableName) {
		c := t.schema.Column(column)
		if c == nil || !c.Filter || column == t.schema.Owner || column == t.schema.Tenant {
			return nil, fmt.Errorf("records: %s.%s is not a filter: %w", tableName, column, retrieval.ErrInvalid)
		}
		limit := cmp.Or(d.cfg.MaxRows, DefaultMaxRows)
		err := d.read(ctx, func(ctx context.Context, tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, "SELECT DISTINCT "+t.text[column]+" FROM "+t.sql+" WHERE "+t.text[column]+" IS NOT NULL LIMIT "+strconv.Itoa(limit))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					return err
				}
				if v != "" && !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("records: values of %s.%s: %w", tableName, column, err)
		}
	}
	return out, nil
}
