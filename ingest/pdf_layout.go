package ingest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/klippa-app/go-pdfium/responses"
)

// Layout thresholds, in ems of the text concerned unless said otherwise.
const (
	wordGap        = 0.25 // a gap this wide between glyphs is a space
	fragGap        = 0.8  // a gap this wide ends a fragment (table cells, columns)
	columnGap      = 1.2  // the least width of a vertical cut (a column gutter), in body ems
	cellMaxWidth   = 16.0 // a table cell is at most this wide; prose lines are wider
	headingRatio   = 1.15 // a line this much larger than the body text is a heading
	marginShare    = 0.15 // running headers and footers lie in this share of the page height
	paragraphGap   = 0.6  // a vertical gap this share of a line's height sets a heading apart
	paragraphPitch = 1.65 // lines further apart than this (top to top) are in two paragraphs
	maxBoldRunes   = 80   // a bold line alone is a heading only when shorter than this
	rowGapHeights  = 2.0  // rows of one table are at most this many row heights apart
)

// glyph is one character with its box in points, y growing downwards
// from the top of the page.
type glyph struct {
	s                  string
	x0, x1, top, bot   float64
	em                 float64
	bold, cjk, isSpace bool
}

// frag is a run of glyphs on one line without a wide gap: a line of a
// paragraph, a table cell, a heading.
type frag struct {
	text             strings.Builder
	x0, x1, top, bot float64
	em               float64
	runes, boldRunes int
	lastCJK          bool
}

// box is what the reading-order cut sorts: a fragment or a whole table.
type box struct {
	x0, x1, top, bot float64
	f                *frag
	t                *pdfTable
}

// pdfTable is a table reconstructed from text positions.
type pdfTable struct {
	header []string
	rows   [][]string
}

// pdfLine is a line of text in reading order, or a table.
type pdfLine struct {
	text             string
	x0, x1, top, bot float64
	em               float64
	bold             bool
	page             int
	table            *pdfTable
	level            int // heading level, 0 for body text
}

// loadPDF reads a PDF file into doc: text in reading order, headings
// from the outline or from font size and weight, tables as rows, every
// block located by its page.
func loadPDF(ctx context.Context, doc *Document, data []byte, o DocOptions) error {
	e, err := o.engine()
	if err != nil {
		return err
	}
	ctx, cancel := o.deadline(ctx)
	defer cancel()
	f, err := e.read(ctx, data, o)
	if err != nil {
		return err
	}
	return layoutPDF(doc, f)
}

// layoutPDF turns the characters of a read PDF into blocks and tables.
func layoutPDF(doc *Document, f pdfFile) error {
	pages := make([][]*frag, len(f.pages))
	glyphs := 0
	scale := emScale(f.pages)
	for i, p := range f.pages {
		pages[i] = fragments(p, scale)
		glyphs += len(pages[i])
	}
	if glyphs == 0 {
		return fmt.Errorf("%w (%d pages, none with text)", ErrNoTextLayer, len(f.pages))
	}
	var bare []int
	for i := range pages {
		if len(pages[i]) == 0 {
			bare = append(bare, i+1)
		}
	}
	if len(bare) > 0 {
		doc.Warnings = append(doc.Warnings, noTextWarning(bare))
	}
	dropRunning(pages, f.pages)
	body := bodyEm(pages)
	var lines []pdfLine
	for i, frs := range pages {
		lines = append(lines, pageLines(frs, body, i+1)...)
	}
	if !outlineHeadings(lines, f.outline) {
		fontHeadings(lines, body)
	}
	title := f.title
	if title == "" {
		for _, l := range lines {
			if l.level == 1 {
				title = l.text
				break
			}
		}
	}
	if title != "" {
		doc.Title = title
	}
	emitPDF(doc, lines)
	return nil
}

// emScale estimates, from the shapes of lower-case letters (or of CJK
// characters when there are few), the factor from PDFium's font size to
// the em in points: producers scale text by matrices PDFium's size does
// not include.
func emScale(pages []pdfPage) float64 {
	var latin, cjk []float64
	for _, p := range pages {
		for _, c := range p.chars {
			if c.FontInformation == nil || c.FontInformation.Size <= 0 {
				continue
			}
			r, _ := utf8.DecodeRuneInString(c.Text)
			h := c.PointPosition.Top - c.PointPosition.Bottom
			if h <= 0 {
				continue
			}
			switch {
			case strings.ContainsRune("acemnorsuvwxz", r):
				latin = append(latin, h/c.FontInformation.Size/0.53)
			case isCJK(r):
				cjk = append(cjk, h/c.FontInformation.Size/0.88)
			}
		}
	}
	switch {
	case len(latin) >= 20:
		return median(latin)
	case len(cjk) > 0:
		return median(cjk)
	case len(latin) > 0:
		return median(latin)
	}
	return 1
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// cjkish reports whether r is a CJK character or CJK punctuation (full
// stops and commas included), written without spaces around it.
func cjkish(r rune) bool {
	return isCJK(r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// toGlyph converts a PDFium character to page coordinates.
func toGlyph(c *responses.GetPageTextStructuredChar, pageH, scale float64) glyph {
	g := glyph{s: c.Text, x0: c.PointPosition.Left, x1: c.PointPosition.Right,
		top: pageH - c.PointPosition.Top, bot: pageH - c.PointPosition.Bottom}
	if g.x1 < g.x0 {
		g.x0, g.x1 = g.x1, g.x0
	}
	if g.bot < g.top {
		g.top, g.bot = g.bot, g.top
	}
	r, _ := utf8.DecodeRuneInString(c.Text)
	g.isSpace = unicode.IsSpace(r) || r == 0xad || r == 0xfffe || r == 0xfeff
	g.cjk = cjkish(r)
	if fi := c.FontInformation; fi != nil {
		g.em = fi.Size * scale
		name := strings.ToLower(fi.Name)
		g.bold = fi.Weight >= 600 || fi.Flags&(1<<18) != 0 ||
			strings.Contains(name, "bold") || strings.Contains(name, "black") || strings.Contains(name, "heavy")
	}
	if g.em <= 0 {
		g.em = max(g.bot-g.top, 1)
	}
	return g
}

// fragments groups a page's characters, in content order, into runs on
// one line without a wide gap.
func fragments(p pdfPage, scale float64) []*frag {
	var out []*frag
	var cur *frag
	space := false
	for _, c := range p.chars {
		if c == nil || c.Text == "" {
			continue
		}
		if c.Text == "\x02" || c.Text == "\u00ad" { // PDFium's mark of a hyphen at a line end
			if cur != nil {
				cur.text.WriteByte('-')
			}
			continue
		}
		g := toGlyph(c, p.height, scale)
		if g.isSpace {
			if c.Text == "\r" || c.Text == "\n" {
				cur = nil
			}
			space = true
			continue
		}
		if g.x1-g.x0 <= 0 && g.bot-g.top <= 0 {
			continue
		}
		if cur != nil && sameLine(cur, g) {
			gap := g.x0 - cur.x1
			em := max(cur.em, g.em)
			if gap >= -0.3*em && gap <= fragGap*em {
				cjkPair := cur.lastCJK && g.cjk
				if (space || gap > wordGap*em) && !cjkPair {
					cur.text.WriteByte(' ')
				}
				cur.add(g)
				space = false
				continue
			}
		}
		cur = &frag{x0: g.x0, x1: g.x1, top: g.top, bot: g.bot}
		cur.add(g)
		out = append(out, cur)
		space = false
	}
	return out
}

func (f *frag) add(g glyph) {
	f.text.WriteString(g.s)
	f.x0, f.x1 = min(f.x0, g.x0), max(f.x1, g.x1)
	f.top, f.bot = min(f.top, g.top), max(f.bot, g.bot)
	f.em = max(f.em, g.em)
	n := utf8.RuneCountInString(g.s)
	f.runes += n
	if g.bold {
		f.boldRunes += n
	}
	f.lastCJK = g.cjk
}

// sameLine reports whether g overlaps cur vertically by half the smaller
// height at least.
func sameLine(cur *frag, g glyph) bool {
	ov := min(cur.bot, g.bot) - max(cur.top, g.top)
	h := min(cur.bot-cur.top, g.bot-g.top)
	return ov >= 0.5*h
}

// pdfRows groups fragments into page-wide rows of vertically overlapping
// fragments, top to bottom, each sorted left to right.
func pdfRows(frs []*frag) [][]*frag {
	sorted := slices.Clone(frs)
	slices.SortStableFunc(sorted, func(a, b *frag) int { return cmp.Compare(a.top, b.top) })
	var out [][]*frag
	var top, bot float64
	for _, f := range sorted {
		if n := len(out); n > 0 {
			ov := min(bot, f.bot) - max(top, f.top)
			if ov >= 0.5*min(bot-top, f.bot-f.top) {
				out[n-1] = append(out[n-1], f)
				top, bot = min(top, f.top), max(bot, f.bot)
				continue
			}
		}
		out = append(out, []*frag{f})
		top, bot = f.top, f.bot
	}
	for _, r := range out {
		slices.SortFunc(r, func(a, b *frag) int { return cmp.Compare(a.x0, b.x0) })
	}
	return out
}

// runningKey is the text of a row as compared across pages: spaces
// removed and digits folded, so "page 3 of 9" matches "page 4 of 9".
func runningKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
		case unicode.IsDigit(r):
			b.WriteByte('#')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// dropRunning removes running headers and footers: fragments near the
// top or bottom edge whose text (digits aside, for page numbers) recurs
// there on at least half the pages, and on two at least. Fragments, not
// rows, are compared, since a producer may put a footer on the line of a
// heading.
func dropRunning(pages [][]*frag, info []pdfPage) {
	if len(pages) < 2 {
		return
	}
	edge := func(f *frag, h float64) bool { return f.top < marginShare*h || f.bot > (1-marginShare)*h }
	count := map[string]int{}
	for i, frs := range pages {
		seen := map[string]bool{}
		for _, f := range frs {
			if k := runningKey(f.text.String()); edge(f, info[i].height) && k != "" && !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	need := max(2, (len(pages)+1)/2)
	for i := range pages {
		pages[i] = slices.DeleteFunc(pages[i], func(f *frag) bool {
			return edge(f, info[i].height) && count[runningKey(f.text.String())] >= need
		})
	}
}

// bodyEm is the size of most of the text, weighted by characters.
func bodyEm(pages [][]*frag) float64 {
	w := map[float64]int{}
	for _, frs := range pages {
		for _, f := range frs {
			w[math.Round(f.em*4)/4] += f.runes
		}
	}
	best, n := 10.0, -1
	for em, c := range w {
		if c > n || (c == n && em < best) {
			best, n = em, c
		}
	}
	return best
}

// pageLines finds a page's tables and puts its text in reading order.
func pageLines(frs []*frag, body float64, page int) []pdfLine {
	if len(frs) == 0 {
		return nil
	}
	var boxes []box
	inTable := map[*frag]bool{}
	for _, t := range findTables(pdfRows(frs), body) {
		b := box{x0: math.Inf(1), x1: math.Inf(-1), top: math.Inf(1), bot: math.Inf(-1), t: t.table}
		for _, f := range t.frags {
			inTable[f] = true
			b.x0, b.x1, b.top, b.bot = min(b.x0, f.x0), max(b.x1, f.x1), min(b.top, f.top), max(b.bot, f.bot)
		}
		boxes = append(boxes, b)
	}
	for _, f := range frs {
		if !inTable[f] {
			boxes = append(boxes, box{x0: f.x0, x1: f.x1, top: f.top, bot: f.bot, f: f})
		}
	}
	var lines []pdfLine
	for _, leaf := range xyCut(boxes, columnGap*body) {
		lines = append(lines, leafLines(leaf, page)...)
	}
	return lines
}

// foundTable is a table and the fragments it was made of.
type foundTable struct {
	table *pdfTable
	frags []*frag
}

// findTables finds runs of rows made of several short fragments whose
// columns line up, the first row being the header.
func findTables(rs [][]*frag, body float64) []foundTable {
	isCells := func(r []*frag) bool {
		if len(r) < 2 {
			return false
		}
		for _, f := range r {
			if f.x1-f.x0 > cellMaxWidth*f.em || f.em > headingRatio*body {
				return false
			}
		}
		return true
	}
	var out []foundTable
	for i := 0; i < len(rs); {
		if !isCells(rs[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && isCells(rs[j]) {
			prev := rs[j-1]
			h := prev[0].bot - prev[0].top
			if rs[j][0].top-rowBottom(prev) > rowGapHeights*h {
				break
			}
			j++
		}
		if t, ok := buildTable(rs[i:j]); ok {
			out = append(out, t)
		}
		i = j
	}
	return out
}

func rowBottom(r []*frag) float64 {
	b := r[0].bot
	for _, f := range r {
		b = max(b, f.bot)
	}
	return b
}

// buildTable assigns the fragments of rows to columns: the spans of x
// that every row leaves free separate them.
func buildTable(rs [][]*frag) (foundTable, bool) {
	if len(rs) < 2 {
		return foundTable{}, false
	}
	type span struct{ x0, x1 float64 }
	var all []*frag
	for _, r := range rs {
		all = append(all, r...)
	}
	byX := slices.Clone(all)
	slices.SortFunc(byX, func(a, b *frag) int { return cmp.Compare(a.x0, b.x0) })
	var cols []span
	for _, f := range byX {
		if n := len(cols); n > 0 && f.x0 <= cols[n-1].x1 {
			cols[n-1].x1 = max(cols[n-1].x1, f.x1)
			continue
		}
		cols = append(cols, span{f.x0, f.x1})
	}
	if len(cols) < 2 {
		return foundTable{}, false
	}
	cells := func(r []*frag) []string {
		out := make([]string, len(cols))
		for _, f := range r {
			for k, c := range cols {
				if f.x0 >= c.x0 && f.x0 <= c.x1 {
					out[k] = strings.TrimSpace(out[k] + " " + f.text.String())
					break
				}
			}
		}
		return out
	}
	t := &pdfTable{header: cells(rs[0])}
	for _, r := range rs[1:] {
		t.rows = append(t.rows, cells(r))
	}
	return foundTable{table: t, frags: all}, true
}

// xyCut orders boxes for reading: it cuts the set at its widest empty
// band, a vertical one (a column gutter at least minCol wide) or a
// horizontal one, and reads the parts left to right or top to bottom.
// The leaves are single lines (or tables).
func xyCut(bs []box, minCol float64) [][]box {
	if len(bs) <= 1 {
		return [][]box{bs}
	}
	hAt, hGap := widestGap(bs, func(b box) (float64, float64) { return b.top, b.bot })
	vAt, vGap := widestGap(bs, func(b box) (float64, float64) { return b.x0, b.x1 })
	var first, second []box
	switch {
	case vGap >= minCol && vGap > hGap:
		for _, b := range bs {
			if b.x1 <= vAt {
				first = append(first, b)
			} else {
				second = append(second, b)
			}
		}
	case hGap > 0:
		for _, b := range bs {
			if b.bot <= hAt {
				first = append(first, b)
			} else {
				second = append(second, b)
			}
		}
	default:
		return [][]box{bs}
	}
	if len(first) == 0 || len(second) == 0 {
		return [][]box{bs}
	}
	return append(xyCut(first, minCol), xyCut(second, minCol)...)
}

// widestGap returns the start and width of the widest band between the
// intervals of bs along one axis.
func widestGap(bs []box, iv func(box) (float64, float64)) (at, width float64) {
	s := slices.Clone(bs)
	slices.SortFunc(s, func(a, b box) int {
		a0, _ := iv(a)
		b0, _ := iv(b)
		return cmp.Compare(a0, b0)
	})
	_, end := iv(s[0])
	for _, b := range s[1:] {
		lo, hi := iv(b)
		if g := lo - end; g > width {
			at, width = end+g/2, g
		}
		end = max(end, hi)
	}
	return at, width
}

// leafLines turns a leaf of the cut into lines.
func leafLines(leaf []box, page int) []pdfLine {
	var frs []*frag
	var out []pdfLine
	for _, b := range leaf {
		if b.t != nil {
			out = append(out, pdfLine{table: b.t, x0: b.x0, x1: b.x1, top: b.top, bot: b.bot, page: page})
			continue
		}
		frs = append(frs, b.f)
	}
	for _, r := range pdfRows(frs) {
		l := pdfLine{x0: r[0].x0, x1: r[0].x1, top: r[0].top, bot: r[0].bot, page: page}
		var b strings.Builder
		runes, bold := 0, 0
		for i, f := range r {
			t := f.text.String()
			if i > 0 && !joinsCJK(b.String(), t) {
				b.WriteByte(' ')
			}
			b.WriteString(t)
			l.x0, l.x1, l.top, l.bot = min(l.x0, f.x0), max(l.x1, f.x1), min(l.top, f.top), max(l.bot, f.bot)
			l.em = max(l.em, f.em)
			runes += f.runes
			bold += f.boldRunes
		}
		l.text = b.String()
		l.bold = bold*2 > runes
		out = append(out, l)
	}
	return out
}

// joinsCJK reports whether a ends and b starts with a CJK character, so
// that they are joined without a space.
func joinsCJK(a, b string) bool {
	r1, _ := utf8.DecodeLastRuneInString(a)
	r2, _ := utf8.DecodeRuneInString(b)
	return cjkish(r1) && cjkish(r2)
}

// headingKey is a heading's text as matched against the outline.
func headingKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsSpace(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// outlineHeadings marks the lines that are the outline's entries, on the
// entry's page (one or two lines, for a heading that wraps). It reports
// false when the outline is missing or matches too few lines to trust.
func outlineHeadings(lines []pdfLine, outline []outlineEntry) bool {
	if len(outline) == 0 {
		return false
	}
	matched := 0
	next := 0 // entries are matched in order, from where the last one was
	for _, e := range outline {
		key := headingKey(e.title)
		for i := next; i < len(lines); i++ {
			l := lines[i]
			if l.table != nil || l.level != 0 || (e.page >= 0 && l.page != e.page+1) {
				continue
			}
			k := headingKey(l.text)
			if k != key && i+1 < len(lines) && strings.HasPrefix(key, k) && lines[i+1].table == nil {
				if headingKey(l.text+lines[i+1].text) == key {
					lines[i].text = strings.TrimSpace(l.text + " " + lines[i+1].text)
					lines = slices.Delete(lines, i+1, i+2)
					k = key
				}
			}
			if k == key {
				lines[i].level = e.level
				matched++
				next = i + 1
				break
			}
		}
	}
	return matched*2 >= len(outline)
}

// fontHeadings marks headings by size: lines larger than the body text,
// one level per size, largest first; then short bold lines standing alone,
// one level below.
func fontHeadings(lines []pdfLine, body float64) {
	var sizes []float64
	for _, l := range lines {
		if l.table == nil && l.em >= headingRatio*body {
			s := math.Round(l.em*2) / 2
			if !slices.Contains(sizes, s) {
				sizes = append(sizes, s)
			}
		}
	}
	slices.SortFunc(sizes, func(a, b float64) int { return cmp.Compare(b, a) })
	for i := range lines {
		l := &lines[i]
		if l.table != nil {
			continue
		}
		if l.em >= headingRatio*body {
			l.level = slices.Index(sizes, math.Round(l.em*2)/2) + 1
			continue
		}
		if l.bold && utf8.RuneCountInString(l.text) <= maxBoldRunes && !endsSentence(l.text) &&
			standsAlone(lines, i) {
			l.level = len(sizes) + 1
		}
	}
}

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimSpace(s))
	return strings.ContainsRune(".,;:!?。，；：！？", r)
}

// standsAlone reports whether line i is separated from its neighbours by
// a paragraph gap or a change of style.
func standsAlone(lines []pdfLine, i int) bool {
	l := lines[i]
	sep := func(j int) bool {
		if j < 0 || j >= len(lines) {
			return true
		}
		o := lines[j]
		if o.table != nil || o.page != l.page || o.bold != l.bold {
			return true
		}
		gap := math.Max(l.top-o.bot, o.top-l.bot)
		return gap > paragraphGap*(l.bot-l.top)
	}
	return sep(i-1) && sep(i+1)
}

// emitPDF writes lines into doc as blocks: one per heading section and
// page, paragraphs joined (hyphens at line ends removed), tables through
// AddTable.
func emitPDF(doc *Document, lines []pdfLine) {
	var levels []int
	var path []string
	var paras []string
	var para strings.Builder
	page := 0
	var prev *pdfLine
	headings := func() []string {
		hs := slices.Clone(path)
		if len(hs) == 0 || hs[0] != doc.Title {
			hs = append([]string{doc.Title}, hs...)
		}
		return hs
	}
	locator := func() string {
		loc := "page " + strconv.Itoa(page)
		if len(path) > 0 {
			loc += " > " + strings.Join(path, " > ")
		}
		return loc
	}
	endPara := func() {
		if t := strings.TrimSpace(para.String()); t != "" {
			paras = append(paras, t)
		}
		para.Reset()
		prev = nil
	}
	flush := func() {
		endPara()
		if len(paras) == 0 {
			return
		}
		doc.Blocks = append(doc.Blocks, Block{Headings: headings(), Text: strings.Join(paras, "\n\n"),
			ContentType: retrieval.ContentText, Locator: locator(),
			Meta: map[string]string{MetaPage: strconv.Itoa(page)}})
		paras = nil
	}
	for i := range lines {
		l := &lines[i]
		if l.page != page {
			flush()
			page = l.page
		}
		switch {
		case l.table != nil:
			flush()
			name := ""
			if len(path) > 0 {
				name = path[len(path)-1]
			}
			t := Table{Name: name, Headings: headings(), Locator: locator(), Header: l.table.header}
			for _, r := range l.table.rows {
				t.Rows = append(t.Rows, Row{Cells: r})
			}
			n := len(doc.Blocks)
			doc.AddTable(t)
			for j := n; j < len(doc.Blocks); j++ {
				doc.Blocks[j].Meta = map[string]string{MetaPage: strconv.Itoa(page)}
			}
		case l.level > 0:
			flush()
			for len(levels) > 0 && levels[len(levels)-1] >= l.level {
				levels, path = levels[:len(levels)-1], path[:len(path)-1]
			}
			levels, path = append(levels, l.level), append(path, l.text)
		default:
			if prev != nil && newParagraph(prev, l) {
				endPara()
			}
			joinLine(&para, l.text)
			prev = l
		}
	}
	flush()
}

// newParagraph reports whether l starts a paragraph after prev: a gap
// wider than a share of the line height, or another size.
func newParagraph(prev, l *pdfLine) bool {
	if math.Abs(prev.em-l.em) > 0.1*prev.em {
		return true
	}
	if l.top < prev.top { // the next column
		return false
	}
	pitch := min(l.top-prev.top, l.bot-prev.bot)
	return pitch > paragraphPitch*prev.em
}

// joinLine appends a line to a paragraph: a word hyphenated at the line
// end is joined, CJK lines are joined without a space, others with one.
func joinLine(b *strings.Builder, line string) {
	cur := b.String()
	if cur == "" {
		b.WriteString(line)
		return
	}
	first, _ := utf8.DecodeRuneInString(line)
	if strings.HasSuffix(cur, "-") && len(cur) >= 2 {
		before, _ := utf8.DecodeLastRuneInString(cur[:len(cur)-1])
		if unicode.IsLetter(before) && unicode.IsLower(first) {
			s := cur[:len(cur)-1] + line
			b.Reset()
			b.WriteString(s)
			return
		}
	}
	if !joinsCJK(cur, line) {
		b.WriteByte(' ')
	}
	b.WriteString(line)
}

// noTextWarning names the 1-based pages, ascending, that have no text:
// "page 2: ..." or "pages 3, 7-9: ...", runs of consecutive pages joined.
func noTextWarning(pages []int) string {
	var b strings.Builder
	b.WriteString("page")
	if len(pages) > 1 {
		b.WriteString("s")
	}
	for i := 0; i < len(pages); {
		j := i
		for j+1 < len(pages) && pages[j+1] == pages[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", pages[i])
		if j > i {
			fmt.Fprintf(&b, "-%d", pages[j])
		}
		i = j + 1
	}
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(ErrNoTextLayer.Error(), "ingest: "))
	return b.String()
}
