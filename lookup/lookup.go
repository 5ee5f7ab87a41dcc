// Package lookup is a structured look-up over small tables (CSV files):
// the retrieval.Lookup and retrieval.Aggregator a knowledge base uses for
// facts that must be read exactly, not searched for: the product of an
// order, the total of all refunds in a month.
//
// Each table has a key column, an optional owner column (a record whose
// owner is not the asking actor is retrieval.ErrNotPermitted: look-ups act
// for the caller, whose actor comes from its authentication) and an
// optional tenant column (a record of another tenant does not exist for
// the caller). Aggregate maps a question to one deterministic query: an
// operation (sum or count, from words such as 总额 / total / 多少笔 / how
// many), a numeric column named in the question, filters from values of
// the table that the question names (P-204), and a period (这个月, last
// month, this year) computed from the store's clock.
package lookup

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Errors of this package; retrieval's sentinels are used for not found and
// not permitted.
var (
	// ErrTable reports a table that cannot be loaded.
	ErrTable = errors.New("lookup: bad table")
)

// TableOptions describe a table's columns.
type TableOptions struct {
	Kind        string              // the table's name ("order")
	Aliases     []string            // words a question uses for it ("订单", "order", "orders")
	Key         string              // the key column (required)
	Owner       string              // the column naming the actor who may read a row; "": public
	Tenant      string              // the column naming the row's tenant; "": the default tenant
	Date        string              // a date column (YYYY-MM-DD) for periods; "": none
	Fields      map[string][]string // words a question uses for a column ("refund": {"退款", "refund"})
	Unit        map[string]string   // a numeric column's unit ("refund": "CNY")
	Origin      string              // the file name, for provenance
	MaxRows     int                 // refuse larger tables; 0: 100,000
	CaseFoldKey bool                // match keys case-insensitively
}

// Table is one loaded table. It is read-only after loading.
type Table struct {
	o    TableOptions
	cols []string
	rows []retrieval.Record
	byID map[string]int
}

// LoadCSV reads a table from CSV with a header row.
func LoadCSV(r io.Reader, o TableOptions) (*Table, error) {
	if o.Kind == "" || o.Key == "" {
		return nil, fmt.Errorf("%w: Kind and Key are required", ErrTable)
	}
	maxRows := cmp.Or(o.MaxRows, 100_000)
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s header: %w", ErrTable, o.Kind, err)
	}
	for i := range head {
		head[i] = strings.TrimSpace(strings.TrimPrefix(head[i], "\ufeff"))
	}
	for _, c := range []string{o.Key, o.Owner, o.Tenant, o.Date} {
		if c != "" && !slices.Contains(head, c) {
			return nil, fmt.Errorf("%w: %s has no column %q", ErrTable, o.Kind, c)
		}
	}
	t := &Table{o: o, cols: head, byID: map[string]int{}}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTable, o.Kind, err)
		}
		if len(t.rows) == maxRows {
			return nil, fmt.Errorf("%w: %s has more than %d rows", ErrTable, o.Kind, maxRows)
		}
		fields := make(map[string]string, len(head))
		for i, c := range head {
			if i < len(rec) {
				fields[c] = strings.TrimSpace(rec[i])
			}
		}
		id := t.key(fields[o.Key])
		if id == "" {
			return nil, fmt.Errorf("%w: %s row %d has no %s", ErrTable, o.Kind, line, o.Key)
		}
		if _, dup := t.byID[id]; dup {
			return nil, fmt.Errorf("%w: %s row %d repeats key %q", ErrTable, o.Kind, line, fields[o.Key])
		}
		t.byID[id] = len(t.rows)
		t.rows = append(t.rows, retrieval.Record{Kind: o.Kind, ID: fields[o.Key], Fields: fields, Origin: o.Origin, Locator: "row " + strconv.Itoa(line)})
	}
	return t, nil
}

func (t *Table) key(s string) string {
	s = strings.TrimSpace(s)
	if t.o.CaseFoldKey {
		s = strings.ToUpper(s)
	}
	return s
}

// Store serves several tables. It is safe for concurrent use.
type Store struct {
	tables []*Table
	now    func() time.Time
}

// New returns a store over tables; now is its clock for periods (nil:
// time.Now).
func New(now func() time.Time, tables ...*Table) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{tables: tables, now: now}
}

var (
	_ retrieval.Lookup     = (*Store)(nil)
	_ retrieval.Aggregator = (*Store)(nil)
)

// Kinds implements retrieval.Lookup.
func (s *Store) Kinds() []retrieval.Kind {
	out := make([]retrieval.Kind, len(s.tables))
	for i, t := range s.tables {
		out[i] = retrieval.Kind{Name: t.o.Kind, Aliases: slices.Clone(t.o.Aliases)}
	}
	return out
}

func (s *Store) table(kind string) *Table {
	for _, t := range s.tables {
		if t.o.Kind == kind {
			return t
		}
	}
	return nil
}

// visible reports whether the caller may see the row at all (tenant) and
// may read it (owner).
func (t *Table) visible(r *retrieval.Record, scope retrieval.Scope, actor string) error {
	if t.o.Tenant != "" && r.Fields[t.o.Tenant] != scope.Tenant || t.o.Tenant == "" && scope.Tenant != "" {
		return retrieval.ErrNotFound
	}
	if t.o.Owner != "" && (actor == "" || r.Fields[t.o.Owner] != actor) {
		return retrieval.ErrNotPermitted
	}
	return nil
}

// Get implements retrieval.Lookup.
func (s *Store) Get(ctx context.Context, scope retrieval.Scope, actor, kind, id string) (retrieval.Record, error) {
	if err := ctx.Err(); err != nil {
		return retrieval.Record{}, fmt.Errorf("lookup: %w", err)
	}
	t := s.table(kind)
	if t == nil {
		return retrieval.Record{}, fmt.Errorf("lookup: no table %q: %w", kind, retrieval.ErrNotFound)
	}
	i, ok := t.byID[t.key(id)]
	if !ok {
		return retrieval.Record{}, fmt.Errorf("lookup: %s %s: %w", kind, id, retrieval.ErrNotFound)
	}
	r := t.rows[i]
	if err := t.visible(&r, scope, actor); err != nil {
		return retrieval.Record{}, fmt.Errorf("lookup: %s %s: %w", kind, id, err)
	}
	return clone(r), nil
}

func clone(r retrieval.Record) retrieval.Record {
	f := make(map[string]string, len(r.Fields))
	for k, v := range r.Fields {
		f[k] = v
	}
	r.Fields = f
	return r
}

// Words that choose the operation of an aggregate.
var (
	sumWords   = []string{"总额", "总计", "合计", "总和", "一共多少钱", "总共多少钱", "总金额", "total", "sum", "in total"}
	countWords = []string{"多少笔", "多少个", "几笔", "几个", "多少单", "几单", "数量", "how many", "count", "number of"}
)

// Aggregate implements retrieval.Aggregator.
func (s *Store) Aggregate(ctx context.Context, scope retrieval.Scope, actor, question string) (retrieval.Aggregate, error) {
	if err := ctx.Err(); err != nil {
		return retrieval.Aggregate{}, fmt.Errorf("lookup: %w", err)
	}
	q := strings.ToLower(question)
	t := s.pickTable(q)
	if t == nil {
		return retrieval.Aggregate{}, fmt.Errorf("lookup: no table named in the question: %w", errors.ErrUnsupported)
	}
	op, field := "", ""
	if containsAny(q, sumWords) {
		op = "sum"
		for col, words := range t.o.Fields {
			if containsAny(q, words) && t.numeric(col) {
				field = col
				break
			}
		}
		if field == "" {
			return retrieval.Aggregate{}, fmt.Errorf("lookup: a total of what? no numeric column of %s is named: %w", t.o.Kind, errors.ErrUnsupported)
		}
	} else if containsAny(q, countWords) {
		op = "count"
	} else {
		return retrieval.Aggregate{}, fmt.Errorf("lookup: neither a total nor a count: %w", errors.ErrUnsupported)
	}
	filters := t.filtersIn(q)
	from, to, period := s.period(q)
	var conds []string
	for _, f := range filters {
		conds = append(conds, f[0]+" = "+f[1])
	}
	if period != "" {
		if t.o.Date == "" {
			return retrieval.Aggregate{}, fmt.Errorf("lookup: %s has no date column for %q: %w", t.o.Kind, period, errors.ErrUnsupported)
		}
		conds = append(conds, fmt.Sprintf("%s in %s..%s", t.o.Date, from.Format(time.DateOnly), to.AddDate(0, 0, -1).Format(time.DateOnly)))
	}
	res := retrieval.Aggregate{Op: op, Unit: t.o.Unit[field]}
	for i := range t.rows {
		r := &t.rows[i]
		if !matches(r, filters) {
			continue
		}
		if period != "" {
			d, err := time.Parse(time.DateOnly, r.Fields[t.o.Date])
			if err != nil || d.Before(from) || !d.Before(to) {
				continue
			}
		}
		if t.visible(r, scope, actor) != nil {
			// Counting rows the caller may not read would leak them.
			continue
		}
		res.Records = append(res.Records, clone(*r))
		if op == "sum" {
			v, _ := strconv.ParseFloat(r.Fields[field], 64)
			res.Value += v
		} else {
			res.Value++
		}
	}
	what := op + "(" + field + ")"
	if op == "count" {
		what = "count(*)"
	}
	res.Query = what + " over " + t.o.Kind
	if len(conds) > 0 {
		res.Query += " where " + strings.Join(conds, " and ")
	}
	if t.o.Owner != "" {
		res.Query += " (rows readable by the caller)"
	}
	return res, nil
}

// pickTable returns the table the question names (an alias), or the only
// table when there is one.
func (s *Store) pickTable(q string) *Table {
	for _, t := range s.tables {
		if containsAny(q, t.o.Aliases) {
			return t
		}
	}
	if len(s.tables) == 1 {
		return s.tables[0]
	}
	return nil
}

func (t *Table) numeric(col string) bool {
	for i := range t.rows {
		if v := t.rows[i].Fields[col]; v != "" {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return false
			}
		}
	}
	return len(t.rows) > 0
}

// filtersIn returns (column, value) pairs whose value the question names:
// identifiers such as P-204, matched as whole tokens.
func (t *Table) filtersIn(q string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, col := range t.cols {
		if col == t.o.Key || col == t.o.Owner || col == t.o.Tenant || col == t.o.Date {
			continue
		}
		for i := range t.rows {
			v := t.rows[i].Fields[col]
			if len(v) < 2 || seen[col+"\x00"+v] || !hasDigit(v) {
				continue
			}
			if containsToken(q, strings.ToLower(v)) {
				seen[col+"\x00"+v] = true
				out = append(out, [2]string{col, v})
			}
		}
	}
	return out
}

func matches(r *retrieval.Record, filters [][2]string) bool {
	for _, f := range filters {
		if !strings.EqualFold(r.Fields[f[0]], f[1]) {
			return false
		}
	}
	return true
}

// period returns the half-open date range a question names, relative to
// the store's clock, and the words that named it ("" when none).
func (s *Store) period(q string) (from, to time.Time, words string) {
	return periodOf(q, s.now())
}

// periodOf returns the half-open date range q names relative to now: a
// relative period (这个月, last month, 今年, last year) or a named month or
// year (2026年3月, March 2026, 2026-03, 2026年, in 2026).
func periodOf(q string, now time.Time) (from, to time.Time, words string) {
	if from, to, words, ok := namedPeriod(q); ok {
		return from, to, words
	}
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	year := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	switch {
	case containsAny(q, []string{"这个月", "本月", "this month"}):
		return month, month.AddDate(0, 1, 0), "this month"
	case containsAny(q, []string{"上个月", "上月", "last month"}):
		return month.AddDate(0, -1, 0), month, "last month"
	case containsAny(q, []string{"今年", "本年", "this year"}):
		return year, year.AddDate(1, 0, 0), "this year"
	case containsAny(q, []string{"去年", "last year"}):
		return year.AddDate(-1, 0, 0), year, "last year"
	}
	return time.Time{}, time.Time{}, ""
}

func containsAny(q string, words []string) bool {
	for _, w := range words {
		if w != "" && containsToken(q, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// containsToken reports whether q contains w not glued to Latin letters or
// digits on either side (CJK text needs no spaces).
func containsToken(q, w string) bool {
	for i := 0; ; {
		j := strings.Index(q[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !wordByte(q[j-1])) && (end == len(q) || !wordByte(q[end])) {
			return true
		}
		i = j + 1
	}
}

func wordByte(b byte) bool {
	return b < 0x80 && (unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b)))
}

func hasDigit(s string) bool { return strings.ContainsFunc(s, unicode.IsDigit) }
