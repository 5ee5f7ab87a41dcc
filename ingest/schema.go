package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ErrSchema reports a schema sidecar (or a declared schema) that cannot be
// read or does not fit its table: bad JSON, an unknown field, a column the
// table does not have.
var ErrSchema = errors.New("ingest: bad table schema")

// Role is what a column holds, as far as questions about the table are
// concerned.
type Role string

// Column roles.
const (
	// RoleKey is the column that names a row: unique, id-like values
	// (A100, SH-40211, HZ-3307).
	RoleKey Role = "key"
	// RoleNumber is a numeric column; its values can be summed.
	RoleNumber Role = "number"
	// RoleDate is a date column (YYYY-MM-DD and the like); periods
	// ("this month") filter on it.
	RoleDate Role = "date"
	// RoleCategory is a column of few distinct, repeated values (a status,
	// a store, a plan); a question names its values to filter.
	RoleCategory Role = "category"
	// RoleText is anything else.
	RoleText Role = "text"
)

// ColumnSchema describes one column of a table.
type ColumnSchema struct {
	Name string `json:"name"`
	Role Role   `json:"role,omitempty"`
	// Unit of a numeric column ("CNY", "ms", "%"), from the header
	// ("amount (CNY)"), the cells ("¥120") or a declaration.
	Unit string `json:"unit,omitempty"`
	// Aliases are the words a question uses for the column ("退款",
	// "refund").
	Aliases []string `json:"aliases,omitempty"`
	// Filter says a question may select rows by the column's value; Sum
	// that its values may be summed. Inference sets Filter for key,
	// category, date and reference columns and Sum for numeric ones; a
	// declaration can add either (never take one away).
	Filter bool `json:"filter,omitempty"`
	Sum    bool `json:"sum,omitempty"`
	// Values are the column's distinct values, in order of first
	// appearance, kept for key, category and id-like columns and text
	// columns of short values (at most MaxSchemaValues): what relations
	// and question vocabularies match against. Nil for other columns.
	Values []string `json:"values,omitempty"`
}

// Relation says that a column's values are keys of another table (an
// order's product column holds product ids).
type Relation struct {
	Column string `json:"column"`
	Table  string `json:"table"`
}

// TableSchema describes a table: its columns' roles and the declared
// permissions. Owner and Tenant are never inferred; they come only from a
// declaration.
type TableSchema struct {
	// Table is the table's name as questions and answers call it
	// ("order"); inference uses the table's own name or its file's.
	Table string `json:"table"`
	// Aliases are the words a question uses for the table ("订单",
	// "orders").
	Aliases []string `json:"aliases,omitempty"`
	// Key is the key column; "" when no column qualifies.
	Key string `json:"key,omitempty"`
	// Owner names the column holding the actor who may read a row; with
	// none, every row is readable by the tenant.
	Owner string `json:"owner,omitempty"`
	// Tenant names the column holding a row's tenant; with none, the
	// table belongs to the tenant it was ingested for.
	Tenant    string         `json:"tenant,omitempty"`
	Columns   []ColumnSchema `json:"columns,omitempty"`
	Relations []Relation     `json:"relations,omitempty"`
}

// Column returns the schema of the named column, or nil.
func (s *TableSchema) Column(name string) *ColumnSchema {
	for i := range s.Columns {
		if s.Columns[i].Name == name {
			return &s.Columns[i]
		}
	}
	return nil
}

// MaxSchemaValues bounds ColumnSchema.Values.
const MaxSchemaValues = 10_000

// maxCategories is the most distinct values a category column has.
const maxCategories = 30

// InferSchema infers the roles of t's columns from their values: the key
// (the first column whose values are all present, unique and id-like, or
// numeric under a header that says id), numeric columns (with a unit from
// the header or the cells), date columns, category columns (at most 30
// distinct values, some repeated, all short) and text. The schema is named
// after t.Name (or "" for the caller to fill in). Owner, Tenant, aliases
// and relations are left empty: see Declare and Relate.
func InferSchema(t Table) TableSchema {
	s := TableSchema{Table: t.Name}
	width := len(t.Header)
	for _, r := range t.Rows {
		width = max(width, len(r.Cells))
	}
	for i := range width {
		var vals []string
		for _, r := range t.Rows {
			if i < len(r.Cells) {
				if v := strings.TrimSpace(r.Cells[i]); v != "" {
					vals = append(vals, v)
				}
			}
		}
		c := inferColumn(t.Column(i), vals, len(t.Rows))
		if c.Role == RoleKey {
			if s.Key != "" {
				c.Role = RoleCategory
				if len(c.Values) > maxCategories {
					c.Role = RoleText
				}
			} else {
				s.Key = c.Name
			}
		}
		setPermissions(&c)
		s.Columns = append(s.Columns, c)
	}
	return s
}

// setPermissions sets the Filter and Sum a column's role implies.
func setPermissions(c *ColumnSchema) {
	switch c.Role {
	case RoleKey, RoleCategory, RoleDate:
		c.Filter = true
	case RoleNumber:
		c.Sum = true
	}
}

func inferColumn(name string, vals []string, rows int) ColumnSchema {
	c := ColumnSchema{Name: name, Role: RoleText}
	if len(vals) == 0 {
		return c
	}
	distinct := distinctValues(vals)
	allID, allNum, allDate := true, true, true
	units := map[string]bool{}
	for _, v := range vals {
		allID = allID && idLike(v)
		if allNum {
			_, u, ok := ParseNumber(v)
			if ok {
				units[u] = true
			}
			allNum = ok
		}
		if allDate {
			_, allDate = ParseDate(v)
		}
	}
	idHeader := idHeaderRE.MatchString(name)
	unique := len(distinct) == len(vals) && len(vals) == rows
	switch {
	case unique && (allID || idHeader && allNum):
		c.Role = RoleKey
	case allDate:
		c.Role = RoleDate
	case allNum:
		c.Role = RoleNumber
		if u := headerUnit(name); u != "" {
			c.Unit = u
		} else if len(units) == 1 {
			for u := range units {
				c.Unit = u
			}
		}
	case len(distinct) <= maxCategories && len(distinct) < len(vals) && short(distinct):
		c.Role = RoleCategory
	}
	if c.Role == RoleKey || c.Role == RoleCategory || allID || c.Role == RoleText && short(distinct) {
		// Short values may be keys (a declared key), references or words
		// a question uses.
		c.Values = distinct[:min(len(distinct), MaxSchemaValues)]
	}
	if c.Role == RoleText && allID {
		c.Filter = true // id-like references (an order's product)
	}
	return c
}

func distinctValues(vals []string) []string {
	seen := make(map[string]bool, len(vals))
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func short(vals []string) bool {
	for _, v := range vals {
		if utf8.RuneCountInString(v) > 40 {
			return false
		}
	}
	return true
}

// idHeaderRE matches a header that says its column holds ids.
var idHeaderRE = regexp.MustCompile(`(?i)(^id$|_id$|\bid$|编号$|号$|代码$|\bcode$|\bno\.?$|\bnumber$)`)

// idLike reports an identifier: letters and digits (with - _ . / #), no
// spaces, at most 40 bytes, and either a digit and a letter (A100,
// SH-40211, HZ-3307, P-204) or upper-case words joined by - or _
// (EXP-NEXT, RES-STD).
func idLike(v string) bool {
	if len(v) < 2 || len(v) > 40 {
		return false
	}
	letter, digit, lower, joined := false, false, false, false
	for _, r := range v {
		switch {
		case r < 0x80 && unicode.IsLetter(r):
			letter = true
			lower = lower || unicode.IsLower(r)
		case unicode.IsDigit(r):
			digit = true
		case r == '-' || r == '_':
			joined = true
		case strings.ContainsRune("./#", r):
		default:
			return false
		}
	}
	return letter && (digit || joined && !lower)
}

// unitRE finds a unit in a header: "amount (CNY)", "金额（元）", "latency [ms]".
var unitRE = regexp.MustCompile(`[(（\[]\s*([^)）\]]{1,12}?)\s*[)）\]]\s*$`)

// suffixUnits are the units a header names after an underscore
// ("charge_eur", "weight_kg").
var suffixUnits = map[string]string{"eur": "EUR", "usd": "USD", "cny": "CNY", "rmb": "CNY", "gbp": "GBP", "kg": "kg", "g": "g",
	"km": "km", "m": "m", "m3": "m³", "ms": "ms", "s": "s", "min": "min", "h": "h", "days": "days", "pct": "%", "percent": "%"}

func headerUnit(h string) string {
	if m := unitRE.FindStringSubmatch(h); m != nil {
		return m[1]
	}
	if i := strings.LastIndexByte(h, '_'); i > 0 {
		return suffixUnits[strings.ToLower(h[i+1:])]
	}
	return ""
}

// numberRE is a number with an optional currency sign before it and an
// optional unit after it: "1,299.50", "¥120", "$15", "30 days", "12%".
var numberRE = regexp.MustCompile(`^([¥$€£]|USD|CNY|RMB|EUR)?\s*([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*(%|[\p{L}]{1,8})?$`)

// ParseNumber reads a cell as a number: digits with thousands separators
// and a decimal point, an optional currency sign before and an optional
// unit after. It returns the value, the unit ("" when none; "¥" and "$"
// become CNY and USD) and whether the cell is a number. Id-like cells
// (A100) are not numbers.
func ParseNumber(v string) (float64, string, bool) {
	m := numberRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, "", false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
	if err != nil {
		return 0, "", false
	}
	unit := m[3]
	switch m[1] {
	case "¥", "CNY", "RMB":
		unit = "CNY"
	case "$", "USD":
		unit = "USD"
	case "€", "EUR":
		unit = "EUR"
	case "£":
		unit = "GBP"
	}
	if m[1] == "" && unit == "元" {
		unit = "CNY"
	}
	return f, unit, true
}

var cnDateRE = regexp.MustCompile(`^(\d{4})年(\d{1,2})月(\d{1,2})日$`)

// ParseDate reads a cell as a calendar date: 2026-03-05, 2026/3/5,
// 2026.03.05, 2026年3月5日, an RFC 3339 timestamp (its date), or a month
// 2026-03 (its first day).
func ParseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if m := cnDateRE.FindStringSubmatch(v); m != nil {
		v = m[1] + "-" + m[2] + "-" + m[3]
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true
	}
	for _, layout := range []string{"2006-01-02", "2006-1-2", "2006/1/2", "2006.1.2", "2006.01.02", "2006-01"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Declare applies a declared schema (a sidecar file's) to an inferred one:
// the declared name, aliases, key, owner, tenant and relations replace the
// inferred ones, and a declared column's role, unit, aliases, filter and
// sum are applied to the column of that name (Filter and Sum can only be
// added). Every column the declaration names must exist (an error matching
// ErrSchema otherwise).
func Declare(inferred, declared TableSchema) (TableSchema, error) {
	s := inferred
	s.Columns = slices.Clone(inferred.Columns)
	has := func(col string) bool { return col == "" || s.Column(col) != nil }
	for _, col := range []string{declared.Key, declared.Owner, declared.Tenant} {
		if !has(col) {
			return s, fmt.Errorf("%w: no column %q", ErrSchema, col)
		}
	}
	if declared.Table != "" {
		s.Table = declared.Table
	}
	if declared.Aliases != nil {
		s.Aliases = declared.Aliases
	}
	if declared.Key != "" && declared.Key != s.Key {
		if old := s.Column(s.Key); old != nil {
			old.Role = RoleText
			if old.Values != nil {
				old.Role = RoleCategory
			}
		}
		s.Key = declared.Key
		s.Column(s.Key).Role = RoleKey
		s.Column(s.Key).Filter = true
	}
	s.Owner, s.Tenant = declared.Owner, declared.Tenant
	for _, dc := range declared.Columns {
		c := s.Column(dc.Name)
		if c == nil {
			return s, fmt.Errorf("%w: no column %q", ErrSchema, dc.Name)
		}
		if dc.Role != "" {
			if !validRole(dc.Role) {
				return s, fmt.Errorf("%w: column %q: unknown role %q", ErrSchema, dc.Name, dc.Role)
			}
			c.Role = dc.Role
			setPermissions(c)
		}
		if dc.Unit != "" {
			c.Unit = dc.Unit
		}
		if dc.Aliases != nil {
			c.Aliases = dc.Aliases
		}
		c.Filter = c.Filter || dc.Filter
		c.Sum = c.Sum || dc.Sum
	}
	for _, r := range declared.Relations {
		if s.Column(r.Column) == nil || r.Table == "" {
			return s, fmt.Errorf("%w: relation from %q to %q", ErrSchema, r.Column, r.Table)
		}
	}
	if declared.Relations != nil {
		s.Relations = declared.Relations
	}
	// The owner and tenant columns are never filters a question sets.
	for _, col := range []string{s.Owner, s.Tenant} {
		if c := s.Column(col); c != nil {
			c.Filter, c.Sum = false, false
		}
	}
	return s, nil
}

func validRole(r Role) bool {
	return slices.Contains([]Role{RoleKey, RoleNumber, RoleDate, RoleCategory, RoleText}, r)
}

// ParseSchema reads a declared table schema (the JSON of a sidecar file,
// see SchemaSidecar). Unknown fields are an error matching ErrSchema, so a
// misspelt "ownr" is not silently ignored.
func ParseSchema(r io.Reader) (TableSchema, error) {
	var s TableSchema
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	if dec.More() {
		return s, fmt.Errorf("%w: trailing data after the schema", ErrSchema)
	}
	return s, nil
}

// SchemaSidecar is the path of the sidecar file declaring the schema of
// the tables of the file at p: "orders.csv" -> "orders.schema.json".
func SchemaSidecar(p string) string {
	return strings.TrimSuffix(p, path.Ext(p)) + ".schema.json"
}

// Relate infers relations between tables: a column of one table whose
// values (ColumnSchema.Values, at least two thirds of them) are keys of
// another table relates to it (an order's product column to the product table). Declared
// relations are kept; inferred ones are added to each schema's Relations.
func Relate(schemas []TableSchema) {
	keys := make([]map[string]bool, len(schemas))
	for i := range schemas {
		if k := schemas[i].Column(schemas[i].Key); k != nil && len(k.Values) > 0 {
			keys[i] = make(map[string]bool, len(k.Values))
			for _, v := range k.Values {
				keys[i][v] = true
			}
		}
	}
	for i := range schemas {
		s := &schemas[i]
		for _, c := range s.Columns {
			if c.Name == s.Key || c.Name == s.Owner || c.Name == s.Tenant || len(c.Values) == 0 || len(c.Values) == MaxSchemaValues {
				continue
			}
			if slices.ContainsFunc(s.Relations, func(r Relation) bool { return r.Column == c.Name }) {
				continue
			}
			for j := range schemas {
				if j == i || keys[j] == nil || schemas[j].Table == "" {
					continue
				}
				hits := 0
				for _, v := range c.Values {
					if keys[j][v] {
						hits++
					}
				}
				// Most values, not all: a dangling reference (an order of
				// a product since withdrawn) does not undo the relation.
				if hits > 0 && hits*3 >= len(c.Values)*2 {
					s.Relations = append(s.Relations, Relation{Column: c.Name, Table: schemas[j].Table})
					break
				}
			}
		}
	}
}

// MarshalSchema renders s as indented JSON, the form ParseSchema reads.
func MarshalSchema(s TableSchema) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return b.Bytes(), nil
}
