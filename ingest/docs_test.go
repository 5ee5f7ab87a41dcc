package ingest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
)

// corpusFile is a generated document of testdata/docs and its source.
type corpusFile struct {
	name, src string
	pdf       bool
}

var corpus = []corpusFile{
	{"passenger-guide.pdf", "src/passenger-guide.html", true},
	{"timetable.pdf", "src/timetable.html", true},
	{"crew-handbook.docx", "src/crew-handbook.md", false},
	{"lost-property.docx", "src/lost-property.md", false},
}

// source is what a source file holds: its text, headings and table rows
// (header rows left out).
type source struct {
	text     string
	headings []string
	rows     [][]string
}

// htmlSource reads an HTML source as a reader sees it, leaving out the
// running header and footer, which the loader is meant to drop.
func htmlSource(t *testing.T, path string) source {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var s source
	var text strings.Builder
	var walk func(n *html.Node)
	textOf := func(n *html.Node) string {
		var b strings.Builder
		var w func(*html.Node)
		w = func(n *html.Node) {
			if n.Type == html.TextNode {
				b.WriteString(n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				w(c)
			}
		}
		w(n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	class := func(n *html.Node) string {
		for _, a := range n.Attr {
			if a.Key == "class" {
				return a.Val
			}
		}
		return ""
	}
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.Data == "head", class(n) == "run-head", class(n) == "run-foot":
				return
			case n.Data == "h1", n.Data == "h2", n.Data == "h3", class(n) == "h2":
				s.headings = append(s.headings, textOf(n))
			case n.Data == "table":
				first := true
				var rows func(*html.Node)
				rows = func(n *html.Node) {
					if n.Type == html.ElementNode && n.Data == "tr" {
						var cells []string
						for c := n.FirstChild; c != nil; c = c.NextSibling {
							if c.Type == html.ElementNode {
								cells = append(cells, textOf(c))
							}
						}
						if !first {
							s.rows = append(s.rows, cells)
						}
						first = false
						return
					}
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						rows(c)
					}
				}
				rows(n)
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	s.text = text.String()
	return s
}

// markdownSource reads a Markdown source: headings, table rows and the
// text without markup.
func markdownSource(t *testing.T, path string) source {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s source
	var text strings.Builder
	lines := strings.Split(string(data), "\n")
	inFront, header := false, false
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "---" && (i == 0 || inFront):
			inFront = !inFront
			continue
		case inFront:
			text.WriteString(strings.TrimPrefix(l, "title:") + " ")
			continue
		case strings.HasPrefix(l, "#"):
			h := strings.TrimSpace(strings.TrimLeft(l, "#"))
			s.headings = append(s.headings, h)
			text.WriteString(h + " ")
			continue
		case strings.HasPrefix(l, "|"):
			if strings.HasPrefix(l, "|---") {
				continue
			}
			cells := strings.Split(strings.Trim(l, "|"), "|")
			for j := range cells {
				cells[j] = strings.TrimSpace(cells[j])
			}
			if header {
				s.rows = append(s.rows, cells)
			}
			header = true
			text.WriteString(strings.Join(cells, " ") + " ")
			continue
		}
		header = false
		l = strings.TrimLeft(l, "-0123456789. ")
		text.WriteString(l + " ")
	}
	s.text = text.String()
	return s
}

// tokens splits text into lower-case words and single CJK characters.
func tokens(s string) []string {
	var out []string
	var w strings.Builder
	end := func() {
		if w.Len() > 0 {
			out = append(out, w.String())
			w.Reset()
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			end()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w.WriteRune(r)
		default:
			end()
		}
	}
	end()
	return out
}

// recall is the share of the source's tokens (counted with repetition)
// found among the ingested ones.
func recall(src, got []string) (found, total int) {
	have := map[string]int{}
	for _, t := range got {
		have[t]++
	}
	for _, t := range src {
		total++
		if have[t] > 0 {
			have[t]--
			found++
		}
	}
	return found, total
}

// formatFigures are the measured figures of one format.
type formatFigures struct {
	tokensFound, tokens     int
	headingsFound, headings int
	rowsWhole, rows         int
	answered, questions     int
	pages                   int
	elapsed                 time.Duration
	files                   int
}

func (f formatFigures) ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// timedRounds is how many times each file is read for the rate.
const timedRounds = 3

type question struct {
	Q       string `json:"q"`
	File    string `json:"file"`
	Page    int    `json:"page"`
	Heading string `json:"heading"`
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestDocCorpus measures the PDF and Word loaders on the generated corpus
// of testdata/docs against its sources: token recall of the source text,
// headings found, table rows rebuilt whole, questions whose top BM25 hit
// cites the right page (PDF) or heading (DOCX), and pages per second. It
// asserts floors; run with -v to print the figures.
func TestDocCorpus(t *testing.T) {
	ctx := context.Background()
	// Compile PDFium and start an instance before timing: pages per second
	// is the rate of a running process.
	if _, err := ingest.Parse("warm-up.pdf", makePDF(pdfOptions{pages: 1, text: "warm-up"}), ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	figs := map[string]*formatFigures{"PDF": {}, "DOCX": {}}
	store, err := memstore.Open(ctx, memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	emb := embed.NewHashing(embed.HashingConfig{}) // the store wants vectors; the questions use BM25
	for _, cf := range corpus {
		data, err := os.ReadFile(filepath.Join("testdata/docs", cf.name))
		if err != nil {
			t.Fatal(err)
		}
		format := "DOCX"
		var src source
		if cf.pdf {
			format = "PDF"
			src = htmlSource(t, filepath.Join("testdata/docs", cf.src))
		} else {
			src = markdownSource(t, filepath.Join("testdata/docs", cf.src))
		}
		fig := figs[format]
		var doc ingest.Document
		start := time.Now()
		for range timedRounds {
			doc, err = ingest.Parse(cf.name, data, ingest.Options{})
		}
		fig.elapsed += time.Since(start) / timedRounds
		if err != nil {
			t.Fatalf("Parse(%s): %v", cf.name, err)
		}
		fig.files++
		chunks := ingest.Chunks(doc, ingest.Options{})
		pages := map[string]bool{}
		var all strings.Builder
		all.WriteString(doc.Title + "\n")
		for _, c := range chunks {
			all.WriteString(c.Text + "\n")
			if p := c.Meta[ingest.MetaPage]; p != "" {
				pages[p] = true
			}
			if c.Meta[retrieval.MetaOrigin] != cf.name {
				t.Errorf("%s: chunk origin %q", cf.name, c.Meta[retrieval.MetaOrigin])
			}
			if cf.pdf && !strings.HasPrefix(c.Meta[retrieval.MetaLocator], "page "+c.Meta[ingest.MetaPage]) {
				t.Errorf("%s: locator %q does not start with its page %q", cf.name, c.Meta[retrieval.MetaLocator], c.Meta[ingest.MetaPage])
			}
		}
		fig.pages += len(pages)
		f, n := recall(tokens(src.text), tokens(all.String()))
		fig.tokensFound += f
		fig.tokens += n
		var found []string
		for _, b := range doc.Blocks {
			for _, h := range b.Headings {
				found = append(found, norm(h))
			}
		}
		for _, h := range src.headings {
			fig.headings++
			if slices.Contains(found, norm(h)) {
				fig.headingsFound++
			} else {
				t.Logf("%s: heading %q not found", cf.name, h)
			}
		}
		for _, r := range src.rows {
			fig.rows++
			whole := false
			for _, tb := range doc.Tables {
				for _, got := range tb.Rows {
					if slices.EqualFunc(got.Cells, r, func(a, b string) bool { return norm(a) == norm(b) }) {
						whole = true
					}
				}
			}
			if whole {
				fig.rowsWhole++
			} else {
				t.Logf("%s: row %q not rebuilt whole", cf.name, r)
			}
		}
		texts := make([]string, len(chunks))
		for i := range chunks {
			texts[i] = ingest.EmbedText(&chunks[i])
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			chunks[i].Vector = vecs[i]
		}
		if err := store.ReplaceDocument(ctx, retrieval.Scope{}, doc.ID, chunks); err != nil {
			t.Fatal(err)
		}
	}

	qf, err := os.Open("testdata/docs/questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	sc := bufio.NewScanner(qf)
	for sc.Scan() {
		var q question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("questions.jsonl: %v", err)
		}
		format := "DOCX"
		if strings.HasSuffix(q.File, ".pdf") {
			format = "PDF"
		}
		fig := figs[format]
		fig.questions++
		hits, err := store.SearchSparse(ctx, retrieval.Request{Text: q.Q, K: 1})
		if err != nil {
			t.Fatal(err)
		}
		ok := false
		cited := ""
		if len(hits) > 0 {
			m := hits[0].Chunk.Meta
			cited = m[retrieval.MetaOrigin] + " " + m[retrieval.MetaLocator]
			if m[retrieval.MetaOrigin] == q.File {
				if q.Page > 0 {
					ok = m[ingest.MetaPage] == strconv.Itoa(q.Page)
				} else {
					ok = slices.Contains(strings.Split(m[retrieval.MetaLocator], " > "), q.Heading)
				}
			}
		}
		if ok {
			fig.answered++
		} else {
			t.Logf("question %q: cited %q, want %s page %d heading %q", q.Q, cited, q.File, q.Page, q.Heading)
		}
	}

	type floor struct{ recall, headings, rows, answered float64 }
	floors := map[string]floor{
		"PDF":  {recall: 0.97, headings: 0.95, rows: 0.95, answered: 0.85},
		"DOCX": {recall: 0.97, headings: 0.95, rows: 0.95, answered: 0.85},
	}
	for _, format := range []string{"PDF", "DOCX"} {
		f := figs[format]
		rate := fmt.Sprintf("%.1f pages/s", float64(f.pages)/f.elapsed.Seconds())
		if format == "DOCX" {
			rate = fmt.Sprintf("%.0f files/s", float64(f.files)/f.elapsed.Seconds())
		}
		t.Logf("%-4s  text recall %.3f (%d/%d tokens)  headings %d/%d  table rows whole %d/%d  right page or heading cited %d/%d  %d files, %d pages, %s",
			format, f.ratio(f.tokensFound, f.tokens), f.tokensFound, f.tokens, f.headingsFound, f.headings,
			f.rowsWhole, f.rows, f.answered, f.questions, f.files, f.pages, rate)
		fl := floors[format]
		if r := f.ratio(f.tokensFound, f.tokens); r < fl.recall {
			t.Errorf("%s text recall %.3f, floor %.2f", format, r, fl.recall)
		}
		if r := f.ratio(f.headingsFound, f.headings); r < fl.headings {
			t.Errorf("%s headings found %.3f, floor %.2f", format, r, fl.headings)
		}
		if r := f.ratio(f.rowsWhole, f.rows); r < fl.rows {
			t.Errorf("%s table rows whole %.3f, floor %.2f", format, r, fl.rows)
		}
		if r := f.ratio(f.answered, f.questions); r < fl.answered {
			t.Errorf("%s questions cited right %.3f, floor %.2f", format, r, fl.answered)
		}
	}
}

// TestPDFLayout pins what the layout must get right on the corpus: the
// two columns read one after the other, the word hyphenated at a line end
// joined, paragraphs not cut at every line, running headers and footers
// gone even where the printer put one on the line of a heading, and that
// heading kept.
func TestPDFLayout(t *testing.T) {
	var all strings.Builder
	blocks := map[string]string{}
	for _, n := range []string{"timetable.pdf", "passenger-guide.pdf"} {
		doc, err := ingest.Parse(n, readCorpus(t, n), ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range doc.Blocks {
			all.WriteString(b.Text + "\n")
			blocks[n+" "+b.Locator] = b.Text
		}
	}
	text := all.String()
	for _, want := range []string{
		"to allow for safe embarkation of prams and bicycles.",
		"Boats leave North Pier on the hour from seven in the morning.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q", want)
		}
	}
	for _, running := range []string{"Customer line", "Timetable subject to weather", "Lakeside Ferries ·"} {
		if strings.Contains(text, running) {
			t.Errorf("running header or footer %q kept", running)
		}
	}
	if got := blocks["timetable.pdf page 1 > Winter Timetable > Willow Island shuttle"]; !strings.HasPrefix(got,
		"A small shuttle boat links Willow Island with the Old Town jetty every half hour between ten and four.") {
		t.Errorf("right column's first section: %q", got)
	}
	if _, ok := blocks["passenger-guide.pdf page 3 > Passenger Guide 2026 > Luggage and pets"]; !ok {
		t.Errorf("heading sharing its line with the footer lost; locators %q", slices.Collect(maps.Keys(blocks)))
	}
}
