package lookup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/records"
	"github.com/adaptrag/adaptrag/retrieval"
)

// Records is the retrieval.Lookup and retrieval.Aggregator of any records
// database (package records): a knowledge base's own tables or a user's
// database read through a declared schema. The question-to-query mapping
// is the one of Store, read from the tables' schemas: a table is named by
// its name or aliases (or its key column's), a total's column by its name
// or aliases among the columns that may be summed, a filter by a value of
// a column that may be filtered, and a period from the database's clock.
// It is safe for concurrent use.
type Records struct {
	db     *records.DB
	tables []ingest.TableSchema
	values map[string][]string // "table\x00column" -> distinct values, for filters
}

var (
	_ retrieval.Lookup     = (*Records)(nil)
	_ retrieval.Aggregator = (*Records)(nil)
)

// NewRecords returns the look-up of db. It reads the distinct values of
// every filter column whose schema holds none (a user's database), at most
// records.DefaultMaxRows of each... (see records.DB.Distinct).
func NewRecords(ctx context.Context, db *records.DB) (*Records, error) {
	r := &Records{db: db, tables: db.Tables(), values: map[string][]string{}}
	for _, t := range r.tables {
		for _, c := range t.Columns {
			if !c.Filter || c.Name == t.Key || c.Role == ingest.RoleDate {
				continue
			}
			vals := c.Values
			if vals == nil {
				var err error
				if vals, err = db.Distinct(ctx, t.Table, c.Name); err != nil {
					return nil, fmt.Errorf("lookup: values of %s.%s: %w", t.Table, c.Name, err)
				}
			}
			r.values[t.Table+"\x00"+c.Name] = vals
		}
	}
	return r, nil
}

// Kinds implements retrieval.Lookup: one kind per table, its aliases the
// table's aliases, its name and its key column's name and aliases.
func (r *Records) Kinds() []retrieval.Kind {
	var out []retrieval.Kind
	for _, t := range r.tables {
		if t.Key == "" || slices.ContainsFunc(out, func(k retrieval.Kind) bool { return k.Name == t.Table }) {
			continue
		}
		out = append(out, retrieval.Kind{Name: t.Table, Aliases: aliasesOf(t)})
	}
	return out
}

func aliasesOf(t ingest.TableSchema) []string {
	a := append(slices.Clone(t.Aliases), t.Table)
	if k := t.Column(t.Key); k != nil {
		a = append(a, k.Aliases...)
	}
	return a
}

// Get implements retrieval.Lookup.
func (r *Records) Get(ctx context.Context, scope retrieval.Scope, actor, kind, id string) (retrieval.Record, error) {
	row, err := r.db.Get(ctx, scope, actor, kind, id)
	if err != nil {
		return retrieval.Record{}, fmt.Errorf("lookup: %w", err)
	}
	return record(row), nil
}

func record(row records.Row) retrieval.Record {
	return retrieval.Record{Kind: row.Table, ID: row.Key, Fields: row.Fields, Origin: row.Origin, Locator: row.Locator}
}

// Related returns, for each column of kind that holds another kind's keys
// (a relation), that kind: what a dependent chain follows from a record.
func (r *Records) Related(kind string) map[string]string {
	out := map[string]string{}
	for _, t := range r.tables {
		if t.Table == kind {
			for _, rel := range t.Relations {
				out[rel.Column] = rel.Table
			}
		}
	}
	return out
}

// idRE finds identifier-like tokens: letters and digits with - _ . / #.
var idRE = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9_./#-]*[A-Za-z0-9]`)

// Ref is a record a question names: its table and id.
type Ref struct{ Kind, ID string }

// Refs returns the records q names, in order of mention: an id that is a
// key of a table (compared without regard to case), or an id shaped like a
// table's keys (HZ-9999 beside HZ-3307: letters kept, digit runs alike),
// which may name a record that does not exist. Each ref is definite: a
// look-up that finds nothing means there is no such record.
func (r *Records) Refs(q string) []Ref {
	var out []Ref
	for _, tok := range idRE.FindAllString(q, -1) {
		if !strings.ContainsFunc(tok, unicode.IsDigit) || !strings.ContainsFunc(tok, unicode.IsLetter) {
			continue
		}
		var exact, shaped []string
		for _, t := range r.tables {
			k := t.Column(t.Key)
			if k == nil {
				continue
			}
			for _, v := range k.Values {
				if strings.EqualFold(v, tok) {
					exact = append(exact, t.Table)
					break
				}
			}
			if len(exact) == 0 && slices.ContainsFunc(k.Values, func(v string) bool { return shape(v) == shape(tok) }) {
				shaped = append(shaped, t.Table)
			}
		}
		kinds := exact
		if len(kinds) == 0 && len(shaped) == 1 {
			kinds = shaped
		}
		if len(kinds) > 1 {
			// Several tables hold the id: the one the question names.
			named := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return !r.names(q, k) })
			if len(named) > 0 {
				kinds = named
			}
		}
		if len(kinds) > 0 && !slices.Contains(out, Ref{kinds[0], tok}) {
			out = append(out, Ref{Kind: kinds[0], ID: tok})
		}
	}
	return out
}

// names reports whether q uses a word for table kind.
func (r *Records) names(q, kind string) bool {
	for _, t := range r.tables {
		if t.Table == kind && containsAny(strings.ToLower(q), aliasesOf(t)) {
			return true
		}
	}
	return false
}

// shape is an id's form: letters upper-cased, each run of digits one 9
// (HZ-3307 and HZ-9999 are both HZ-9).
func shape(id string) string {
	var b strings.Builder
	digit := false
	for _, c := range strings.ToUpper(id) {
		if unicode.IsDigit(c) {
			if !digit {
				b.WriteByte('9')
			}
			digit = true
			continue
		}
		digit = false
		b.WriteRune(c)
	}
	return b.String()
}

// Words that make a total. Strong ones ask for a sum ("退费总额", "total
// refund"); weak ones ("一共", "in total") ask for a sum only when no count
// word is there ("一共有多少笔" counts).
var (
	strongSum = []string{"总额", "总计", "合计", "总和", "总金额", "total", "sum", "sum of", "多少元", "多少钱", "多少块", "多少欧元", "多少美元", "how much"}
	weakSum   = []string{"一共", "总共", "共计", "累计", "altogether", "in total"}
	countOnly = []string{"多少笔", "多少个", "几笔", "几个", "多少单", "几单", "多少条", "几条", "多少位", "几位", "数量", "how many", "count", "number of"}
)

// Aggregate implements retrieval.Aggregator: the question becomes one
// records.Query, run over every row the caller may read.
func (r *Records) Aggregate(ctx context.Context, scope retrieval.Scope, actor, question string) (retrieval.Aggregate, error) {
	if err := ctx.Err(); err != nil {
		return retrieval.Aggregate{}, fmt.Errorf("lookup: %w", err)
	}
	q, err := r.query(strings.ToLower(question))
	if err != nil {
		return retrieval.Aggregate{}, err
	}
	res, err := r.db.Total(ctx, scope, actor, q)
	if err != nil {
		return retrieval.Aggregate{}, fmt.Errorf("lookup: %w", err)
	}
	a := retrieval.Aggregate{Query: q.String(), Op: q.Op, Value: res.Value, Unit: res.Unit, Rows: res.Count}
	if res.OwnerOnly {
		a.Query += " (rows readable by the caller)"
	}
	for _, row := range res.Rows {
		a.Records = append(a.Records, record(row))
	}
	return a, nil
}

// IsTotal reports whether question asks for a total or a count over one
// of the tables: a sum of a column it names by name, alias or unit, or a
// count whose words stand next to the table's name ("how many shipments",
// "一共有几条选课记录", "选课记录有多少条").
func (r *Records) IsTotal(question string) bool {
	q := strings.ToLower(question)
	query, err := r.query(q)
	if err != nil {
		return false
	}
	if query.Op == "sum" {
		return true
	}
	t, _ := r.pick(q, false)
	if t == nil {
		return false
	}
	for _, cw := range countOnly {
		for _, a := range aliasesOf(*t) {
			if near(q, cw, strings.ToLower(a)) {
				return true
			}
		}
	}
	return false
}

// near reports whether a and b both occur in q with at most two words
// (or four CJK characters) between them, either way round.
func near(q, a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		for i := 0; ; {
			j := strings.Index(q[i:], pair[0])
			if j < 0 {
				break
			}
			j += i
			rest := q[j+len(pair[0]):]
			if k := strings.Index(rest, pair[1]); k >= 0 {
				gap := rest[:k]
				if len(strings.Fields(gap)) <= 2 && utf8.RuneCountInString(strings.Join(strings.Fields(gap), "")) <= 16 &&
					(isASCII(gap) || utf8.RuneCountInString(gap) <= 4) {
					return true
				}
			}
			i = j + 1
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// query maps a lower-cased question to a query over one table.
func (r *Records) query(q string) (records.Query, error) {
	count := containsAny(q, countOnly)
	strong := containsAny(q, strongSum) && !strings.Contains(q, "total number")
	sum := strong || !count && containsAny(q, weakSum)
	t, field := r.pick(q, sum)
	if t == nil {
		return records.Query{}, fmt.Errorf("lookup: no table named in the question: %w", errors.ErrUnsupported)
	}
	out := records.Query{Table: t.Table}
	switch {
	case field != "" && sum:
		out.Op, out.Column = "sum", field
	case count:
		out.Op = "count"
	case sum:
		return records.Query{}, fmt.Errorf("lookup: a total of what? no column of %s that may be summed is named: %w", t.Table, errors.ErrUnsupported)
	default:
		return records.Query{}, fmt.Errorf("lookup: neither a total nor a count: %w", errors.ErrUnsupported)
	}
	for _, c := range t.Columns {
		vals := r.values[t.Table+"\x00"+c.Name]
		var named []string
		for _, v := range vals {
			if utf8.RuneCountInString(v) >= 2 && containsToken(q, strings.ToLower(v)) {
				named = append(named, v)
			}
		}
		// A value inside another named value ("north" in "north-east") is
		// not named itself.
		named = slices.DeleteFunc(named, func(v string) bool {
			return slices.ContainsFunc(named, func(w string) bool { return w != v && strings.Contains(strings.ToLower(w), strings.ToLower(v)) })
		})
		switch len(named) {
		case 0:
		case 1:
			out.Filters = append(out.Filters, records.Filter{Column: c.Name, Value: named[0]})
		default:
			return records.Query{}, fmt.Errorf("lookup: the question names %d values of %s.%s (%s): %w", len(named), t.Table, c.Name, strings.Join(named, ", "), errors.ErrUnsupported)
		}
	}
	if from, to, words := periodOf(q, r.db.Now()); words != "" {
		col := ""
		for _, c := range t.Columns {
			if c.Role == ingest.RoleDate {
				col = c.Name
				break
			}
		}
		if col == "" {
			return records.Query{}, fmt.Errorf("lookup: %s has no date column for %q: %w", t.Table, words, errors.ErrUnsupported)
		}
		out.DateColumn, out.From, out.To = col, from.Format(time.DateOnly), to.Format(time.DateOnly)
	}
	return out, nil
}

// pick returns the table a total or count is over and the summable column
// the question names (""): for a sum, the table one of whose summable
// columns is named (the one also named by an alias first); else the table
// named by the longest alias; else the only table.
func (r *Records) pick(q string, sum bool) (*ingest.TableSchema, string) {
	var best *ingest.TableSchema
	bestScore := 0
	for i := range r.tables {
		t := &r.tables[i]
		score := 0
		for _, a := range aliasesOf(*t) {
			if len(a) > score && containsAny(q, []string{a}) {
				score = len(a)
			}
		}
		if sum && summable(q, t) != "" {
			score += 1000
		}
		if score > bestScore {
			best, bestScore = t, score
		}
	}
	if best == nil && len(r.tables) == 1 {
		best = &r.tables[0]
	}
	if best == nil {
		return nil, ""
	}
	return best, summable(q, best)
}

// summable returns the column of t that may be summed and that q names by
// its name (underscores as spaces) or an alias, the longest match first.
func summable(q string, t *ingest.TableSchema) string {
	field, n := "", 0
	for _, c := range t.Columns {
		if !c.Sum || c.Name == t.Key {
			continue
		}
		words := append([]string{c.Name, strings.ReplaceAll(c.Name, "_", " ")}, c.Aliases...)
		if h := headerWord(c.Name); h != "" {
			words = append(words, h)
		}
		for _, w := range slices.Clone(words) {
			if w != "" && w[len(w)-1] < 0x80 && unicode.IsLetter(rune(w[len(w)-1])) {
				words = append(words, w+"s") // "charges" names charge
			}
		}
		for _, w := range words {
			if len(w) > n && containsAny(q, []string{w}) {
				field, n = c.Name, len(w)
			}
		}
	}
	if field != "" {
		return field
	}
	// A unit the question names ("一共多少欧元") picks the one column in it.
	for unit, words := range unitWords {
		if !containsAny(q, words) {
			continue
		}
		var cols []string
		for _, c := range t.Columns {
			if c.Sum && strings.EqualFold(c.Unit, unit) {
				cols = append(cols, c.Name)
			}
		}
		if len(cols) == 1 {
			return cols[0]
		}
	}
	return ""
}

// unitWords are the words a question uses for a unit.
var unitWords = map[string][]string{
	"EUR": {"欧元", "euro", "euros", "eur", "€"},
	"USD": {"美元", "dollar", "dollars", "usd"},
	"CNY": {"元", "人民币", "yuan", "rmb", "cny"},
	"kg":  {"公斤", "千克", "kilograms", "kg"},
}

// headerWord is a header without its unit: "amount (CNY)" -> "amount".
func headerWord(h string) string {
	if i := strings.IndexAny(h, "(（["); i > 0 {
		return strings.TrimSpace(h[:i])
	}
	if i := strings.LastIndexByte(h, '_'); i > 0 {
		return h[:i] // "charge_eur" -> "charge"
	}
	return ""
}

// Close closes the records database.
func (r *Records) Close() error { return r.db.Close() }
