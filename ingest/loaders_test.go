package ingest_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// parseFile parses a fixture of testdata/loaders.
func parseFile(t *testing.T, name string, o ingest.Options) ingest.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "loaders", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ingest.Parse(name, data, o)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return doc
}

func TestParseMarkdown(t *testing.T) {
	doc := parseFile(t, "guide.md", ingest.Options{})
	if doc.Title != "Office Guide" {
		t.Errorf("title = %q, want the first H1", doc.Title)
	}
	type sec struct{ path, text string }
	var got []sec
	for _, b := range doc.Blocks {
		got = append(got, sec{strings.Join(b.Headings, " > "), b.Text})
	}
	want := []sec{
		{"Office Guide", "Welcome to the office."},
		{"Office Guide > Parking", "Parking is free for staff."},
		{"Office Guide > Parking > Visitors", "Visitors park on level -1.\n\n```sh\n# not a heading: inside a fence\necho hi\n```"},
		{"Office Guide > Kitchen", "The kitchen closes at 20:00."},
	}
	if !slices.Equal(got, want) {
		t.Errorf("sections:\n got %q\nwant %q", got, want)
	}
}

func TestParseCSVKeepsHeaderNames(t *testing.T) {
	doc := parseFile(t, "approvals.csv", ingest.Options{})
	if len(doc.Blocks) != 2 {
		t.Fatalf("%d blocks, want one per data row (2)", len(doc.Blocks))
	}
	want := []string{
		"费用类型: 差旅; 金额区间: 5000以上; 审批人: 部门负责人, 财务总监; 所需材料: 发票",
		// The empty 金额区间 cell is left out; a line break in a cell is folded.
		"费用类型: 招待; 审批人: 部门负责人; 所需材料: 发票 招待清单",
	}
	for i, b := range doc.Blocks {
		if b.Text != want[i] {
			t.Errorf("row %d text = %q, want %q", i+1, b.Text, want[i])
		}
		if b.ContentType != retrieval.ContentTableRow || b.Title != "approvals" {
			t.Errorf("row %d: content type %q, title %q", i+1, b.ContentType, b.Title)
		}
	}
	chunks := ingest.Chunks(doc, ingest.Options{})
	if len(chunks) != 2 || !strings.HasPrefix(chunks[0].Text, "approvals\n费用类型: 差旅") {
		t.Errorf("chunks = %q", texts(chunks))
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct{ name, data string }{
		{"x.csv", "a,b\n\"open,1\n"},
		{"x.jsonl", "{\"text\":\"ok\"}\n[1,2]\n"},
		{"y.jsonl", "{\"text\":\"ok\"}\nnot json\n"},
		{"z.jsonl", "{\"title\":\"no text field\"}\n"},
		{"faq.jsonl", "{\"question\":\"q\",\"answer\":\"a\"}\n{\"question\":\"no answer\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.Parse(tt.name, []byte(tt.data), ingest.Options{})
			if !errors.Is(err, ingest.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if strings.HasSuffix(tt.name, "jsonl") && !strings.Contains(err.Error(), "line") {
				t.Errorf("error %q does not give the line", err)
			}
		})
	}
	if _, err := ingest.Parse("logo.png", []byte("x"), ingest.Options{}); !errors.Is(err, ingest.ErrUnsupported) {
		t.Errorf("png: err = %v, want ErrUnsupported", err)
	}
}

func TestParseJSONLFAQ(t *testing.T) {
	doc := parseFile(t, "faq.jsonl", ingest.Options{})
	if !doc.FAQ || len(doc.Blocks) != 0 || len(doc.Entries) != 2 {
		t.Fatalf("FAQ %v, %d blocks, %d entries; want an FAQ file of 2 entries (blank line skipped)", doc.FAQ, len(doc.Blocks), len(doc.Entries))
	}
	want := ingest.FAQEntry{ID: "q2", Question: "退货运费谁承担？", Answer: "质量问题由公司承担。", Source: "after_sales", Lang: "zh", Locator: "id q2"}
	if doc.Entries[1] != want {
		t.Errorf("entry = %+v, want %+v", doc.Entries[1], want)
	}
	cs := ingest.Chunks(doc, ingest.Options{})
	c := cs[1]
	if c.ContentType != retrieval.ContentFAQ || c.Source != "after_sales" || c.Text != "退货运费谁承担？" || c.Title != c.Text {
		t.Errorf("chunk = %+v: want the question alone as text and title", c)
	}
	if c.Meta[retrieval.MetaAnswer] != "质量问题由公司承担。" || c.Meta[retrieval.MetaQuestion] != c.Text ||
		c.Meta[retrieval.MetaLang] != "zh" || c.Meta[retrieval.MetaOrigin] != "faq.jsonl" || c.Meta[retrieval.MetaLocator] != "id q2" {
		t.Errorf("meta = %v", c.Meta)
	}
	if got := ingest.EmbedText(&c); got != "退货运费谁承担？" {
		t.Errorf("EmbedText = %q, want the question only", got)
	}
	// Options.Source wins over the record's source.
	if cs := ingest.Chunks(doc, ingest.Options{Source: "faq"}); cs[0].Source != "faq" {
		t.Errorf("source = %q, want the Options.Source override", cs[0].Source)
	}
}

func TestParseJSONLCustomFields(t *testing.T) {
	doc := parseFile(t, "notes.jsonl", ingest.Options{JSONL: ingest.JSONLOptions{TextFields: []string{"body"}}})
	b := doc.Blocks[0]
	if b.Text != "Badges are issued at reception." || b.ContentType != retrieval.ContentText {
		t.Errorf("block = %+v", b)
	}
	if b.Title != "Badge" || b.RecordID != "n1" || b.Meta["text"] == "" {
		t.Errorf("title %q, id %q, meta %v", b.Title, b.RecordID, b.Meta)
	}
}

func TestParseHTML(t *testing.T) {
	doc := parseFile(t, "page.html", ingest.Options{})
	if doc.Title != "Help Page" {
		t.Errorf("title = %q", doc.Title)
	}
	var all []string
	for _, b := range doc.Blocks {
		all = append(all, strings.Join(b.Headings, " > ")+"|"+b.Text)
	}
	want := []string{
		"Help Page|Intro text wrapped.",
		// The table with a header row is a Table: one row block, no " | ".
		"Help Page > Codes|Code: E1; Meaning: Bad password",
		"Help Page > Codes|- First\n- Second",
	}
	if !slices.Equal(all, want) {
		t.Errorf("blocks:\n got %q\nwant %q", all, want)
	}
	for _, s := range all {
		for _, bad := range []string{"secret", "color", "Home", "Copyright"} {
			if strings.Contains(s, bad) {
				t.Errorf("block %q contains %q from a script, style, nav or footer", s, bad)
			}
		}
	}
}

func TestParseText(t *testing.T) {
	doc := parseFile(t, "notes.txt", ingest.Options{})
	if doc.Title != "Parking rules" || len(doc.Blocks) != 1 {
		t.Fatalf("title %q, %d blocks", doc.Title, len(doc.Blocks))
	}
	if got := doc.Blocks[0].Text; got != "Staff park on level -2.\nVisitors park on level -1." {
		t.Errorf("text = %q", got)
	}
	// Without a title line the file name is the title.
	doc, err := ingest.Parse("hr/sick_leave.txt", []byte("Sick leave needs a certificate."), ingest.Options{})
	if err != nil || doc.Title != "sick leave" {
		t.Errorf("title = %q, err %v", doc.Title, err)
	}
}

func TestParseNormalisesInput(t *testing.T) {
	doc, err := ingest.Parse("a.txt", []byte("\ufeffline one\r\nline \xff two\r\n"), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Blocks[0].Text; got != "line one\nline \ufffd two" {
		t.Errorf("text = %q", got)
	}
}

func texts(cs []retrieval.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}
