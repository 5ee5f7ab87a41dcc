package query

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// EntityKind is the kind of an entity found in a question.
type EntityKind string

// Entity kinds. The first three are identifiers a question is about (their
// role is "subject"); the others are values that fill a slot of it.
const (
	// Product is an identifier of a thing: model and part numbers and SKUs
	// (P-204, X-200, SKU-3381, A100 when nothing says it is an order).
	Product EntityKind = "product"
	// Order is a record number introduced as one: 订单 A100, order 55120,
	// ticket INC-4411, 运单 SF1029384756, #12345.
	Order EntityKind = "order"
	// Code is an error or status code, a machine identifier or a standard:
	// 0x80070005, error 691, CrashLoopBackOff, ERR_CONNECTION_RESET,
	// ISO 27001, NIST 800-88, CVE-2021-44228.
	Code EntityKind = "code"
	// Amount is money: 5000元, 2万元, $300, USD 1,200, 3千块.
	Amount EntityKind = "amount"
	// Duration is a length of time: 30 days, 15 天, 两周, 3 business days,
	// 半年, 26 个月.
	Duration EntityKind = "duration"
	// Date is a point or period in time, absolute or relative: 去年, last
	// week, 2024-05-01, 3 月 5 日, 这个月, March 3, 上周五, Q3, 3 天前.
	Date EntityKind = "date"
	// Percent is a percentage: 15%, 百分之十, 20 percent.
	Percent EntityKind = "percent"
	// Number is any other number, with its measure word when it has one:
	// 5000, 30 公斤, 3 件, 10 GB.
	Number EntityKind = "number"
)

// Roles of entities. A date's role is what happened then, when the text
// says so; the rewriter keeps the role and never computes the date.
const (
	RoleSubject  = "subject"
	RolePurchase = "purchase"
	RoleReceipt  = "receipt"
	RoleShipment = "shipment"
	RoleTime     = "time"
)

// Entity is an identifier, number or time expression of a text.
type Entity struct {
	// Value is the entity as written, with full-width forms folded and runs
	// of spaces collapsed ("３０ 天" -> "30 天").
	Value string     `json:"value"`
	Kind  EntityKind `json:"kind"`
	// Role is the slot the entity fills: "subject" for products, orders and
	// codes; for a date what happened then ("purchase", "receipt",
	// "shipment") or "time"; otherwise the kind ("amount", "duration",
	// "percent", "number").
	Role string `json:"role"`
}

// span is an entity with its position and comparison data.
type span struct {
	kind   EntityKind
	role   string
	i, j   int // chars [i, j) of the text
	ni, nj int // the numeric part, for numeric kinds
	num    float64
	unit   string // canonical unit: "day", "cny", "kg", ...
	cue    string // the word that introduced an identifier ("订单", "order")
	key    string // comparison key (see sameEntity)
	value  string
	vk     string // the vocabulary's kind of a KnownName
}

func (s *span) subject() bool {
	return s.kind == Product || s.kind == Order || s.kind == Code || s.kind == KnownName
}
func (s *span) numeric() bool {
	return s.kind == Amount || s.kind == Duration || s.kind == Percent || s.kind == Number
}

// Entities returns the identifiers, numbers and time expressions of text in
// order, each with its kind and role. It is deterministic, uses no regular
// expressions and no dictionary of any knowledge base: identifiers are
// recognised by shape (letters and digits, a hyphen, a hex prefix, CamelCase)
// and by the word that introduces them (订单, order, error, 型号).
func Entities(text string) []Entity {
	return newText(text).entities()
}

func (t *text) entities() []Entity {
	if len(t.spans) == 0 {
		return nil
	}
	out := make([]Entity, len(t.spans))
	for k, s := range t.spans {
		out[k] = Entity{Value: s.value, Kind: s.kind, Role: s.role}
	}
	return out
}

// sameEntity reports whether a and b name the same thing: identifiers by
// their key whatever their kind (P-204 = P204; A100 the product = A100 the
// order), numbers by value and unit (30 天 = 三十天 = 30 days; 2万元 =
// 20,000元; a bare 40 matches 40 days), dates by their key (去年 = last year).
func sameEntity(a, b *span) bool {
	switch {
	case a.subject() && b.subject():
		return a.key == b.key
	case a.numeric() && b.numeric():
		if a.num != b.num {
			return false
		}
		if a.kind == b.kind {
			return a.unit == b.unit || a.unit == "" || b.unit == ""
		}
		return a.kind == Number || b.kind == Number
	case a.kind == Date && b.kind == Date:
		return a.key == b.key
	}
	return false
}

// sameSlot reports whether b can take a's place in a question: same kind,
// or a bare number against any numeric slot, or identifiers of any kind.
func sameSlot(a, b *span) bool {
	switch {
	case a.vk != "" && b.vk != "":
		return a.vk == b.vk
	case a.kind == b.kind:
		return a.kind != Date || a.role == b.role || a.role == RoleTime || b.role == RoleTime
	case a.subject() && b.subject():
		return true
	case a.numeric() && b.numeric():
		return a.kind == Number || b.kind == Number
	}
	return false
}

func (t *text) add(s span) {
	if t.spans == nil {
		t.spans = make([]span, 0, 4)
	}
	t.spans = append(t.spans, s)
}

// scanEntities fills t.spans.
func scanEntities(t *text) {
	for i := 0; i < len(t.cs); {
		r := t.cs[i].r
		k := i
		switch {
		case isDigit(r):
			k = t.scanDigits(i)
		case isLetter(r):
			k = t.scanLatin(i)
		case r == '$' || r == '¥' || r == '€' || r == '£':
			k = t.scanCurrency(i, i+1, currencyOfSymbol(r))
		case r == '#':
			k = t.scanHash(i)
		case isHan(r):
			k = t.scanHan(i)
		}
		if k <= i {
			k = i + 1
		}
		i = k
	}
	t.mergeDates()
	t.addNames()
	t.assignRoles()
	for k := range t.spans {
		s := &t.spans[k]
		s.value = t.folded(s.i, s.j)
		if s.key == "" {
			s.key = spanKey(s)
		}
	}
}

func spanKey(s *span) string {
	switch {
	case s.subject():
		var b strings.Builder
		for _, r := range s.value {
			if r == '-' || r == '_' || r == ' ' || r == '/' || r == '.' {
				continue
			}
			if r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
		}
		return b.String()
	case s.kind == Date:
		if k, ok := relativeDateKey[compactKey(s.value)]; ok {
			return k
		}
		return compactKey(s.value)
	}
	return string(s.kind) + ":" + s.unit + ":" + strconv.FormatFloat(s.num, 'g', -1, 64)
}

// number reads an ASCII number at i: digits, thousands separators (ASCII
// commas before three digits) and one decimal point.
func (t *text) number(i int) (j int, v float64, digits int) {
	var buf [40]byte
	b := buf[:0]
	dot := false
	j = i
	for {
		r := t.at(j)
		switch {
		case isDigit(r):
			if len(b) < len(buf) {
				b = append(b, byte(r))
			}
			digits++
			j++
			continue
		case r == ',' && t.src[t.off(j)] == ',' && !dot && isDigit(t.at(j+1)) && isDigit(t.at(j+2)) && isDigit(t.at(j+3)) && !isDigit(t.at(j+4)):
			j++
			continue
		case r == '.' && !dot && isDigit(t.at(j+1)) && len(b) > 0:
			dot = true
			b = append(b, '.')
			j++
			continue
		}
		break
	}
	v, _ = strconv.ParseFloat(string(b), 64)
	return j, v, digits
}

// intDigits reads 1 to max ASCII digits at i.
func (t *text) intDigits(i, max int) (j, v int) {
	j = i
	for j < len(t.cs) && j-i < max && isDigit(t.cs[j].r) {
		v = v*10 + int(t.cs[j].r-'0')
		j++
	}
	if isDigit(t.at(j)) {
		return i, 0
	}
	return j, v
}

// scanDigits recognises everything that starts with an ASCII digit.
func (t *text) scanDigits(i int) int {
	// Hex codes: 0x80070005.
	if t.at(i) == '0' && (t.at(i+1) == 'x' || t.at(i+1) == 'X') && isHex(t.at(i+2)) {
		j := i + 2
		for isHex(t.at(j)) {
			j++
		}
		if !isAlnum(t.at(j)) {
			t.add(span{kind: Code, role: RoleSubject, i: i, j: j})
		}
		return t.alnumEnd(j)
	}
	if j := t.scanDigitDate(i); j > i {
		return j
	}
	j, v, _ := t.number(i)
	if isAlnum(t.at(i - 1)) { // the tail of a word we did not take
		return t.alnumEnd(j)
	}
	// Letters glued to the number: 24h, 5k, 10GB, 30days; else a word (2FA).
	if isLetter(t.at(j)) {
		e := t.wordEnd(j)
		if isDigit(t.at(e)) || t.at(e) == '-' && isAlnum(t.at(e+1)) {
			return t.alnumEnd(e)
		}
		w := t.lowerWord(j, e)
		if u, ok := latinUnits[w]; ok && u.glued {
			return t.addNumeric(i, j, e, v, u)
		}
		return e
	}
	// 30-day, 24-hour.
	if t.at(j) == '-' && isLetter(t.at(j+1)) {
		e := t.wordEnd(j + 1)
		if u, ok := latinUnits[t.lowerWord(j+1, e)]; ok && u.kind == Duration {
			return t.addNumeric(i, j, e, v, u)
		}
		return j
	}
	// Digit groups joined by hyphens (phone numbers, 800-88 outside a standard).
	if t.at(j) == '-' && isDigit(t.at(j+1)) {
		e := j
		for isDigit(t.at(e)) || t.at(e) == '-' && isDigit(t.at(e+1)) {
			e++
		}
		t.add(span{kind: Number, role: string(Number), i: i, j: e, ni: i, nj: e, key: "n:" + t.folded(i, e)})
		return e
	}
	if t.at(j) == '%' {
		return t.addNumeric(i, j, j+1, v, unit{kind: Percent, name: "%"})
	}
	k := j
	if isSpace(t.at(k)) && !isSpace(t.at(k+1)) {
		k++
	}
	// Chinese units and multipliers.
	if isHan(t.at(k)) {
		if e := t.hanAfterNumber(i, j, k, v, false); e > i {
			return e
		}
	}
	// English units: 30 days, 3 business days, 5 percent, 2 million dollars.
	if isLetter(t.at(k)) {
		if e := t.latinAfterNumber(i, j, k, v); e > i {
			return e
		}
	}
	t.bareNumber(i, j, v)
	return j
}

// alnumEnd skips the rest of an alphanumeric word.
func (t *text) alnumEnd(j int) int {
	for isAlnum(t.at(j)) || (t.at(j) == '-' || t.at(j) == '_') && isAlnum(t.at(j+1)) {
		j++
	}
	return j
}

// scanDigitDate recognises 2024-05-01, 2024/5/1, 2024.05.01 and 10:30.
func (t *text) scanDigitDate(i int) int {
	j, y := t.intDigits(i, 4)
	if j-i == 4 && y >= 1900 && y <= 2100 {
		sep := t.at(j)
		if sep == '-' || sep == '/' || sep == '.' {
			k, m := t.intDigits(j+1, 2)
			if k > j+1 && m >= 1 && m <= 12 && t.at(k) == sep {
				e, d := t.intDigits(k+1, 2)
				if e > k+1 && d >= 1 && d <= 31 && !isAlnum(t.at(e)) {
					t.add(span{kind: Date, i: i, j: e, key: "ymd:" + strconv.Itoa(y) + "-" + strconv.Itoa(m) + "-" + strconv.Itoa(d)})
					return e
				}
			}
		}
	}
	if j-i >= 1 && j-i <= 2 && t.at(j) == ':' {
		if e, mm := t.intDigits(j+1, 2); e == j+3 && mm < 60 && y < 24 && !isAlnum(t.at(e)) {
			t.add(span{kind: Date, i: i, j: e})
			return e
		}
	}
	return i
}

// unit is a measure word after a number.
type unit struct {
	kind  EntityKind
	name  string  // canonical
	mult  float64 // multiplier applied to the number (0 means 1)
	glued bool    // may be written without a space (24h, 5kg)
}

func (t *text) addNumeric(i, nj, e int, v float64, u unit) int {
	if u.mult != 0 {
		v *= u.mult
	}
	t.add(span{kind: u.kind, role: string(u.kind), i: i, j: e, ni: i, nj: nj, num: v, unit: u.name})
	return e
}

// hanAfterNumber handles a number (chars [i, nj), value v) followed at k by
// a Chinese unit. han reports a number written in Chinese numerals.
func (t *text) hanAfterNumber(i, nj, k int, v float64, han bool) int {
	integral := v == float64(int(v))
	switch {
	case t.at(k) == '年' && !han && integral && v >= 1000 && v <= 2100:
		e := k + 1
		key := "y:" + strconv.Itoa(int(v))
		if m, e2 := t.monthDay(t.skipSpaces(e)); m != "" {
			key, e = "y"+strconv.Itoa(int(v))+m, e2
		}
		t.add(span{kind: Date, i: i, j: e, key: key})
		return e
	case t.at(k) == '月' && integral && v >= 1 && v <= 12 && !t.endsWith(i, "个"):
		m, e := t.monthDay(i)
		if m == "" {
			return i
		}
		t.add(span{kind: Date, i: i, j: e, key: m})
		return e
	case (t.at(k) == '日' || t.at(k) == '号') && !han && integral && v >= 1 && v <= 31:
		next := t.at(k + 1)
		if t.at(k) == '号' && strings.ContainsRune(numberedPlaces, next) {
			t.add(span{kind: Number, role: string(Number), i: i, j: k + 1, ni: i, nj: nj, num: v, unit: "号"})
			return k + 1
		}
		if t.at(k) == '号' || !strings.ContainsRune("内后前起", next) {
			t.add(span{kind: Date, i: i, j: k + 1, key: "d:" + strconv.Itoa(int(v))})
			return k + 1
		}
	}
	// Multipliers: 2万, 3千, 1.5亿, then an optional currency.
	mult := 1.0
	e := k
	for _, m := range hanMultipliers {
		if t.hasAt(e, m.s) {
			mult, e = m.v, e+utf8.RuneCountInString(m.s)
			break
		}
	}
	for _, u := range hanUnits {
		if !t.hasRunes(e, u.r) {
			continue
		}
		if u.s == "星期" || u.s == "周" || u.s == "礼拜" {
			if strings.ContainsRune("一二三四五六日天末年", t.at(e+len(u.r))) {
				continue
			}
		}
		if han && u.u.kind != Duration && u.u.kind != Amount && u.u.kind != Percent {
			continue
		}
		end := e + len(u.r)
		if u.u.kind == Duration && t.hasAt(end, "前") && !t.hasAt(end, "前后") {
			t.add(span{kind: Date, i: i, j: end + 1})
			return end + 1
		}
		return t.addNumeric(i, nj, end, v*mult, u.u)
	}
	if mult != 1 && !han {
		// A bare 2万 is money far more often than anything else.
		return t.addNumeric(i, nj, e, v*mult, unit{kind: Amount, name: "cny"})
	}
	return i
}

// monthDay reads "M月", "M月D日", "M月D号", "M月份", "M月初" at i (ASCII or
// Chinese numerals) and returns a key and the end.
func (t *text) monthDay(i int) (string, int) {
	j, m := t.intDigits(i, 2)
	if j == i {
		j, m = t.hanSmall(i)
	}
	k := t.skipSpaces(j)
	if j == i || t.at(k) != '月' || m < 1 || m > 12 {
		return "", i
	}
	e := k + 1
	key := "md:" + strconv.Itoa(m)
	ds := t.skipSpaces(e)
	de, d := t.intDigits(ds, 2)
	if de == ds {
		de, d = t.hanSmall(ds)
	}
	if de > ds {
		dk := t.skipSpaces(de)
		if (t.at(dk) == '日' || t.at(dk) == '号') && d >= 1 && d <= 31 {
			return key + "-" + strconv.Itoa(d), dk + 1
		}
	}
	for _, suf := range []string{"份", "初", "底", "末", "中旬", "上旬", "下旬", "中"} {
		if t.hasAt(e, suf) {
			return key + suf, e + utf8.RuneCountInString(suf)
		}
	}
	return key, e
}

// hanSmall reads a Chinese numeral up to 99 at i.
func (t *text) hanSmall(i int) (int, int) {
	j := i
	for j < len(t.cs) && j-i < 3 && strings.ContainsRune("零〇一二两三四五六七八九十", t.cs[j].r) {
		j++
	}
	if j == i {
		return i, 0
	}
	v, ok := parseHan(t.cs[i:j])
	if !ok || v != float64(int(v)) {
		return i, 0
	}
	return j, int(v)
}

// latinAfterNumber handles a number followed at k by an English word.
func (t *text) latinAfterNumber(i, nj, k int, v float64) int {
	e := t.wordEnd(k)
	w := t.lowerWord(k, e)
	if w == "business" || w == "working" || w == "calendar" || w == "school" {
		k2 := t.skipSpaces(e)
		e2 := t.wordEnd(k2)
		if w2 := t.lowerWord(k2, e2); w2 == "day" || w2 == "days" {
			name := "workday"
			if w == "calendar" {
				name = "day"
			}
			return t.agoDate(i, nj, e2, v, unit{kind: Duration, name: name})
		}
		return i
	}
	if m, ok := monthNames[w]; ok && len(w) >= 3 && v >= 1 && v <= 31 && v == float64(int(v)) {
		t.add(span{kind: Date, i: i, j: e, key: "md:" + strconv.Itoa(m) + "-" + strconv.Itoa(int(v))})
		return e
	}
	if mult, ok := latinMultipliers[w]; ok {
		v *= mult
		k2 := t.skipSpaces(e)
		e2 := t.wordEnd(k2)
		if u, ok := latinUnits[t.lowerWord(k2, e2)]; ok && u.kind == Amount {
			return t.addNumeric(i, nj, e2, v, u)
		}
		t.add(span{kind: Number, role: string(Number), i: i, j: e, ni: i, nj: nj, num: v})
		return e
	}
	if w == "per" {
		k2 := t.skipSpaces(e)
		if e2, ok := t.wordAt(k2, "cent"); ok {
			return t.addNumeric(i, nj, e2, v, unit{kind: Percent, name: "%"})
		}
	}
	if u, ok := latinUnits[w]; ok {
		return t.agoDate(i, nj, e, v, u)
	}
	return i
}

// agoDate adds a numeric span, or a date for "3 days ago".
func (t *text) agoDate(i, nj, e int, v float64, u unit) int {
	if u.kind == Duration {
		if e2, ok := t.wordAt(t.skipSpaces(e), "ago"); ok {
			t.add(span{kind: Date, i: i, j: e2})
			return e2
		}
	}
	return t.addNumeric(i, nj, e, v, u)
}

// bareNumber adds a number with no unit: an order or error code when a cue
// word introduces it, a year after "in"/"since", else a number.
func (t *text) bareNumber(i, j int, v float64) {
	if kind, cue := t.cueBefore(i); kind != "" && j-i >= 3 {
		t.add(span{kind: kind, role: RoleSubject, i: i, j: j, cue: cue})
		return
	}
	if kind := t.listKind(i); kind != "" && j-i >= 3 {
		t.add(span{kind: kind, role: RoleSubject, i: i, j: j})
		return
	}
	if j-i == 4 && v >= 1900 && v <= 2100 {
		p := t.backSpaces(i)
		for _, w := range yearPrepositions {
			if t.endsWith(p, w) {
				t.add(span{kind: Date, i: i, j: j, key: "y:" + strconv.Itoa(int(v))})
				return
			}
		}
	}
	t.add(span{kind: Number, role: string(Number), i: i, j: j, ni: i, nj: j, num: v})
}

// cueBefore looks for a word introducing an identifier just before char i:
// an order cue (订单, order no.), an error cue (错误码, error) or a product
// cue (型号, model).
func (t *text) cueBefore(i int) (EntityKind, string) {
	p := i
	for p > 0 {
		r := t.cs[p-1].r
		if isSpace(r) || r == ':' || r == '#' || r == '：' || r == '.' && isLetter(t.at(p-2)) {
			p--
			continue
		}
		break
	}
	for _, c := range cueWords {
		if t.endsWithRunes(p, c.r) {
			return c.kind, c.s
		}
	}
	return "", ""
}

// listKind returns the kind of the identifier this one is listed after
// ("orders 70012 and 70019", "工单 T-1001、T-1002"), or "".
func (t *text) listKind(i int) EntityKind {
	if len(t.spans) == 0 {
		return ""
	}
	last := &t.spans[len(t.spans)-1]
	if !last.subject() {
		return ""
	}
	p := t.backSpaces(i)
	for _, c := range listJoiners {
		if t.endsWith(p, c) {
			q := t.backSpaces(p - utf8.RuneCountInString(c))
			if q == last.j {
				return last.kind
			}
		}
	}
	return ""
}

// scanHash recognises #12345 as an order number.
func (t *text) scanHash(i int) int {
	j, _, digits := t.number(i + 1)
	if digits >= 3 && !isAlnum(t.at(j)) {
		t.add(span{kind: Order, role: RoleSubject, i: i, j: j, cue: "#"})
		return j
	}
	return i + 1
}

// scanCurrency recognises an amount whose currency comes first: $300, ¥5,000,
// USD 1,200, $5k, US$ 2 million. i is the start, k the char after the
// currency.
func (t *text) scanCurrency(i, k int, cur string) int {
	if isSpace(t.at(k)) {
		k++
	}
	if !isDigit(t.at(k)) {
		return i + 1
	}
	j, v, _ := t.number(k)
	nj := j
	e := j
	switch {
	case isLetter(t.at(j)):
		we := t.wordEnd(j)
		if m, ok := latinMultipliers[t.lowerWord(j, we)]; ok && !isDigit(t.at(we)) {
			v, e = v*m, we
		}
	case isSpace(t.at(j)) && isLetter(t.at(j+1)):
		we := t.wordEnd(j + 1)
		if m, ok := latinMultipliers[t.lowerWord(j+1, we)]; ok {
			v, e = v*m, we
		}
	default:
		for _, m := range hanMultipliers {
			if t.hasAt(j, m.s) {
				v, e = v*m.v, j+utf8.RuneCountInString(m.s)
				break
			}
		}
	}
	for _, s := range []string{"元", "块"} { // ¥300元
		if t.hasAt(e, s) {
			e++
		}
	}
	t.add(span{kind: Amount, role: string(Amount), i: i, j: e, ni: k, nj: nj, num: v, unit: cur})
	return e
}

func currencyOfSymbol(r rune) string {
	switch r {
	case '$':
		return "usd"
	case '€':
		return "eur"
	case '£':
		return "gbp"
	}
	return "cny"
}

// scanLatin recognises everything that starts with an ASCII letter: codes,
// identifiers, standards, currency codes, dates and number words.
func (t *text) scanLatin(i int) int {
	if isAlnum(t.at(i - 1)) {
		return t.alnumEnd(i)
	}
	if e := t.scanLatinDate(i); e > i {
		return e
	}
	// The word with its inner hyphens, underscores and slashes.
	j := i
	letters, digits, uppers, lowers, hyphen, under := 0, 0, 0, 0, false, false
	firstDigit := -1
	for {
		r := t.at(j)
		switch {
		case isDigit(r):
			digits++
			if firstDigit < 0 {
				firstDigit = j
			}
		case isLetter(r):
			letters++
			if isUpper(r) {
				uppers++
			} else {
				lowers++
			}
		case (r == '-' || r == '_') && isAlnum(t.at(j+1)) && j > i:
			if r == '-' {
				hyphen = true
			} else {
				under = true
			}
		case r == '/' && isUpper(t.at(j-1)) && isUpper(t.at(j+1)):
		default:
			goto done
		}
		j++
	}
done:
	w := t.lowerWord(i, j)
	// Currency codes before a number: USD 1,200; US$300.
	if cur, ok := currencyCodes[w]; ok {
		k := j
		if w == "us" && t.at(k) == '$' {
			k++
		}
		if isDigit(t.at(k)) || isSpace(t.at(k)) && isDigit(t.at(k+1)) {
			return t.scanCurrency(i, k, cur)
		}
	}
	// Standards: ISO 27001, ISO/IEC 27001:2022, NIST SP 800-88, PCI DSS 4.0, SOC 2.
	if digits == 0 && standardBodies[strings.ToUpper(w)] {
		k := t.skipSpaces(j)
		if e := t.wordEnd(k); e > k && qualifierWords[t.lowerWord(k, e)] {
			k = t.skipSpaces(e)
		}
		if isDigit(t.at(k)) && k > j {
			e := k
			for isDigit(t.at(e)) || (t.at(e) == '-' || t.at(e) == '.' || t.at(e) == ':') && isDigit(t.at(e+1)) {
				e++
			}
			if !isLetter(t.at(e)) {
				t.add(span{kind: Code, role: RoleSubject, i: i, j: e})
				return e
			}
		}
	}
	switch {
	case digits > 0 && letters > 0 && !isDigit(t.at(i)) && (hyphen || under || digits >= 2):
		kind, cue := t.cueBefore(i)
		if kind == "" {
			kind = t.listKind(i)
		}
		if kind == "" {
			kind = Product
			if p := t.lowerWord(i, firstDigit); codePrefixes[strings.TrimRight(p, "-_")] {
				kind = Code
			}
		}
		t.add(span{kind: kind, role: RoleSubject, i: i, j: j, cue: cue})
		return j
	case digits > 0 && digits <= 3 && letters > 0 && letters <= 3 && lowers == 0 && !isDigit(t.at(i)) && (t.cueOrList(i, j)):
		// A short model code (P1, X5, K2): only when a cue names it
		// ("plan P1", "型号 X5") or it is listed with another of its shape
		// ("P1 or P2"), since Q3, H1 or MP3 alone are not ids.
		kind, cue := t.cueBefore(i)
		if kind == "" {
			kind = Product
		}
		t.add(span{kind: kind, role: RoleSubject, i: i, j: j, cue: cue})
		return j
	case digits == 0 && under && lowers == 0 && uppers >= 3:
		t.add(span{kind: Code, role: RoleSubject, i: i, j: j}) // ERR_CONNECTION_RESET
		return j
	case digits == 0 && !hyphen && isCamel(t.cs[i:j]):
		t.add(span{kind: Code, role: RoleSubject, i: i, j: j}) // CrashLoopBackOff, OOMKilled
		return j
	}
	// Number words with a unit: two years, thirty days.
	if v, ok := numberWords[w]; ok && digits == 0 {
		k := t.skipSpaces(j)
		if e := t.wordEnd(k); e > k {
			if u, ok := latinUnits[t.lowerWord(k, e)]; ok && (u.kind == Duration || u.kind == Percent) {
				return t.agoDate(i, j, e, v, u)
			}
		}
	}
	return j
}

// cueOrList reports whether the short code at [i, j) has a cue word before
// it, or is listed with another short code of its shape (before or after
// it, across a list joiner).
func (t *text) cueOrList(i, j int) bool {
	if k, _ := t.cueBefore(i); k != "" {
		return true
	}
	shape := func(a, b int) bool { // 1-3 capitals then 1-3 digits, nothing glued on
		if a < 0 || b > len(t.cs) || a >= b || a > 0 && isAlnum(t.cs[a-1].r) || b < len(t.cs) && isAlnum(t.cs[b].r) {
			return false
		}
		k := a
		for k < b && isUpper(t.cs[k].r) {
			k++
		}
		if k == a || k-a > 3 || b-k == 0 || b-k > 3 {
			return false
		}
		for ; k < b; k++ {
			if !isDigit(t.cs[k].r) {
				return false
			}
		}
		return true
	}
	codeAt := func(a int) (int, bool) { // the end of a short code starting at a
		b := a
		for b < len(t.cs) && isAlnum(t.cs[b].r) {
			b++
		}
		return b, shape(a, b)
	}
	for _, c := range listJoiners {
		// After: "P1 or P2".
		k := t.skipSpaces(j)
		if t.hasAt(k, c) {
			if _, ok := codeAt(t.skipSpaces(k + utf8.RuneCountInString(c))); ok {
				return true
			}
		}
		// Before: "… P1 or P2" seen from P2.
		p := t.backSpaces(i)
		if t.endsWith(p, c) {
			q := t.backSpaces(p - utf8.RuneCountInString(c))
			a := q
			for a > 0 && isAlnum(t.cs[a-1].r) {
				a--
			}
			if shape(a, q) {
				return true
			}
		}
	}
	return false
}

// isCamel reports an identifier written in CamelCase: at least two capitals
// and a lower-case letter, a capital after the first letter, five letters or
// more (CrashLoopBackOff, OOMKilled, ImagePullBackOff; not iPhone, not VPN).
func isCamel(cs []char) bool {
	if len(cs) < 5 {
		return false
	}
	up, low, inner := 0, 0, false
	for k, c := range cs {
		switch {
		case isUpper(c.r):
			up++
			if k > 0 && !isUpper(cs[k-1].r) {
				inner = true
			}
			if k > 0 && k+1 < len(cs) && isUpper(cs[k-1].r) && !isUpper(cs[k+1].r) && up >= 3 {
				inner = true // OOMKilled
			}
		case isLetter(c.r):
			low++
		default:
			return false
		}
	}
	return up >= 2 && low > 0 && inner
}

// scanLatinDate recognises English time expressions at i.
func (t *text) scanLatinDate(i int) int {
	c := lower(t.at(i))
	for _, p := range latinDates[c] {
		if e, ok := t.wordAt(i, p.s); ok {
			t.add(span{kind: Date, i: i, j: e})
			return e
		}
	}
	e := t.wordEnd(i)
	w := t.lowerWord(i, e)
	// Q1..Q4, FY2024, FY24, Q3 2024.
	if (w == "q" || w == "h") && isDigit(t.at(e)) {
		if e2, v := t.intDigits(e, 1); e2 > e && !isAlnum(t.at(e2)) && (w == "q" && v >= 1 && v <= 4 || w == "h" && v >= 1 && v <= 2) {
			end := e2
			if k := t.skipSpaces(e2); k > e2 {
				if e3, y := t.intDigits(k, 4); e3 == k+4 && y >= 1900 && y <= 2100 {
					end = e3
				}
			}
			t.add(span{kind: Date, i: i, j: end})
			return end
		}
	}
	if w == "fy" && isDigit(t.at(e)) {
		if e2, _ := t.intDigits(e, 4); (e2 == e+2 || e2 == e+4) && !isAlnum(t.at(e2)) {
			t.add(span{kind: Date, i: i, j: e2})
			return e2
		}
	}
	// Month names: March 3, Mar 3rd, May 2024, March (capitalised).
	if m, ok := monthNames[w]; ok {
		k := t.skipSpaces(e)
		if k > e && isDigit(t.at(k)) {
			e2, d := t.intDigits(k, 4)
			if e2-k == 4 && d >= 1900 {
				t.add(span{kind: Date, i: i, j: e2, key: "ym:" + strconv.Itoa(d) + "-" + strconv.Itoa(m)})
				return e2
			}
			if e2 > k && d >= 1 && d <= 31 {
				end := e2
				if se := t.wordEnd(e2); se > e2 && ordinalSuffix[t.lowerWord(e2, se)] {
					end = se
				}
				key := "md:" + strconv.Itoa(m) + "-" + strconv.Itoa(d)
				if t.at(end) == ',' && isSpace(t.at(end+1)) {
					if e3, y := t.intDigits(end+2, 4); e3 == end+6 && y >= 1900 {
						end, key = e3, "ymd:"+strconv.Itoa(y)+"-"+strconv.Itoa(m)+"-"+strconv.Itoa(d)
					}
				}
				t.add(span{kind: Date, i: i, j: end, key: key})
				return end
			}
		}
		if len(w) > 3 && w != "march" && w != "may" || isUpper(t.at(i)) && w != "may" && len(w) > 3 {
			t.add(span{kind: Date, i: i, j: e, key: "m:" + strconv.Itoa(m)})
			return e
		}
	}
	return i
}

// scanHan recognises Chinese time expressions, Chinese numerals with a unit
// and 百分之….
func (t *text) scanHan(i int) int {
	for _, p := range hanDates[t.at(i)] {
		if t.hasRunes(i, p.r) {
			e := i + len(p.r)
			t.add(span{kind: Date, i: i, j: e})
			return e
		}
	}
	if t.hasAt(i, "百分之") {
		k := i + 3
		j := k
		for j < len(t.cs) && isHanNumeral(t.cs[j].r) {
			j++
		}
		var v float64
		ok := false
		if j > k {
			v, ok = parseHan(t.cs[k:j])
		} else if isDigit(t.at(k)) {
			j, v, _ = t.number(k)
			ok = true
		}
		if ok {
			t.add(span{kind: Percent, role: string(Percent), i: i, j: j, ni: k, nj: j, num: v, unit: "%"})
			return j
		}
		return i + 3
	}
	if !isHanNumeral(t.at(i)) {
		return i
	}
	j := i
	for j < len(t.cs) && isHanNumeral(t.cs[j].r) {
		j++
	}
	// 第一, 统一, 一些: numerals glued to a word are not numbers; only a
	// numeral run followed by a unit is taken.
	v, ok := parseHan(t.cs[i:j])
	if !ok {
		return j
	}
	if t.at(j) == '个' && (t.hasAt(j+1, "月") || t.hasAt(j+1, "小时") || t.hasAt(j+1, "工作日") || t.hasAt(j+1, "星期") || t.hasAt(j+1, "礼拜") || t.hasAt(j+1, "季度") || t.hasAt(j+1, "自然日")) {
		if e := t.hanAfterNumber(i, j, j, v, true); e > i {
			return e
		}
	}
	if e := t.hanAfterNumber(i, j, j, v, true); e > i {
		return e
	}
	// 两万, 三千: a round Chinese number with no unit is money, as 2万 is.
	if last, next := t.at(j-1), t.at(j); strings.ContainsRune("万千亿", last) && j-i >= 2 && (!isHan(next) || strings.ContainsRune("的以多左上下内呢吗吧啊了", next)) {
		t.add(span{kind: Amount, role: string(Amount), i: i, j: j, ni: i, nj: j, num: v, unit: "cny"})
	}
	return j
}

// parseHan parses a Chinese numeral: 三十 30, 十五 15, 两万 20000, 一百二十
// 120, 半 0.5, 二〇二四 2024.
func parseHan(cs []char) (float64, bool) {
	if len(cs) == 1 && cs[0].r == '半' {
		return 0.5, true
	}
	total, section, digit := 0.0, 0.0, -1.0
	positional := true // 二〇二四
	for _, c := range cs {
		if hanDigit(c.r) < 0 {
			positional = false
		}
	}
	if positional && len(cs) > 1 {
		v := 0.0
		for _, c := range cs {
			v = v*10 + hanDigit(c.r)
		}
		return v, true
	}
	for _, c := range cs {
		if d := hanDigit(c.r); d >= 0 {
			digit = d
			continue
		}
		var m float64
		switch c.r {
		case '十':
			m = 10
		case '百':
			m = 100
		case '千':
			m = 1000
		case '万':
			m = 1e4
		case '亿':
			m = 1e8
		case '半':
			return 0, false
		default:
			return 0, false
		}
		if m >= 1e4 {
			if digit > 0 {
				section += digit
			}
			total += section * m
			if section == 0 {
				total *= m
			}
			section, digit = 0, -1
			continue
		}
		if digit < 0 {
			digit = 1 // 十五
		}
		section += digit * m
		digit = -1
	}
	if digit > 0 {
		section += digit
	}
	return total + section, true
}

func hanDigit(r rune) float64 {
	switch r {
	case '零', '〇':
		return 0
	case '一':
		return 1
	case '二', '两':
		return 2
	case '三':
		return 3
	case '四':
		return 4
	case '五':
		return 5
	case '六':
		return 6
	case '七':
		return 7
	case '八':
		return 8
	case '九':
		return 9
	}
	return -1
}

// mergeDates joins date spans separated only by spaces or a comma
// ("去年 11 月", "March 3, 2024" is read whole already).
func (t *text) mergeDates() {
	out := t.spans[:0]
	for _, s := range t.spans {
		if n := len(out); n > 0 && s.kind == Date && out[n-1].kind == Date {
			gap := true
			for k := out[n-1].j; k < s.i; k++ {
				if !isSpace(t.cs[k].r) && t.cs[k].r != '的' {
					gap = false
					break
				}
			}
			if gap {
				out[n-1].j = s.j
				out[n-1].key = ""
				continue
			}
		}
		out = append(out, s)
	}
	t.spans = out
}

// assignRoles gives each date the role of the nearest event verb in its
// clause: bought -> purchase, received -> receipt, shipped -> shipment; else
// time.
func (t *text) assignRoles() {
	for k := range t.spans {
		s := &t.spans[k]
		if s.kind != Date {
			continue
		}
		s.role = RoleTime
		ci, cj := s.i, s.j
		for ci > 0 && !isClauseEnd(t.cs[ci-1].r) {
			ci--
		}
		for cj < len(t.cs) && !isClauseEnd(t.cs[cj].r) {
			cj++
		}
		best := len(t.cs) + 1
		for p := ci; p < cj; p++ {
			if p >= s.i && p < s.j {
				continue
			}
			for _, rv := range roleVerbIndex[lower(t.cs[p].r)] {
				if !t.hasRunes(p, rv.r) || isLetter(rv.r[0]) && (isAlnum(t.at(p-1)) || isAlnum(t.at(p+len(rv.r)))) {
					continue
				}
				d := s.i - p
				if p >= s.j {
					d = p - s.j
				}
				if d < best {
					best, s.role = d, rv.role
				}
			}
		}
	}
}
