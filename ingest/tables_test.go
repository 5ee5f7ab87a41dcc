package ingest_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// rowBlocks returns the table-row blocks of doc.
func rowBlocks(doc ingest.Document) []ingest.Block {
	var out []ingest.Block
	for _, b := range doc.Blocks {
		if b.ContentType == retrieval.ContentTableRow {
			out = append(out, b)
		}
	}
	return out
}

func TestParseTSV(t *testing.T) {
	data := "depot\tcity\tsaturday_hours\n\"Harlow\tHarlow Cross\t08:00-14:00\nBrennock\tBrennock Town\tclosed\n"
	doc, err := ingest.Parse("depots/depot_hours.tsv", []byte(data), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowBlocks(doc)
	if len(rows) != 2 || len(doc.Tables) != 1 {
		t.Fatalf("%d row blocks, %d tables", len(rows), len(doc.Tables))
	}
	if got, want := rows[0].Text, `depot: "Harlow; city: Harlow Cross; saturday_hours: 08:00-14:00`; got != want {
		t.Errorf("row 2 = %q, want %q", got, want)
	}
	if rows[1].Locator != "row 3" || rows[1].Title != "depot hours" {
		t.Errorf("row 3 located %q, titled %q", rows[1].Locator, rows[1].Title)
	}
}

const mdWithTable = `# Parcel Service Guide

## Parcel size classes

The size class sets the base price before zone and fuel surcharges. The
length is the longest side of the parcel.

| Size class | Max length (cm) | Base price (EUR) |
|:-----------|----------------:|------------------|
| XS         | 30              | 4.90             |
| M          | 60              | 9.50 \| net      |

A parcel that exceeds the XL limits is freight and must be booked through the
freight desk.

## Prohibited items

We do not carry loose lithium batteries.
`

func TestParseMarkdownTable(t *testing.T) {
	doc, err := ingest.Parse("service_guide.md", []byte(mdWithTable), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Tables) != 1 {
		t.Fatalf("%d tables", len(doc.Tables))
	}
	tb := doc.Tables[0]
	if tb.Name != "Parcel size classes" || strings.Join(tb.Header, ",") != "Size class,Max length (cm),Base price (EUR)" {
		t.Errorf("table %q, header %q", tb.Name, tb.Header)
	}
	rows := rowBlocks(doc)
	if len(rows) != 2 {
		t.Fatalf("%d row blocks, want 2 (the header row is no row)", len(rows))
	}
	if got, want := rows[1].Text, "Size class: M; Max length (cm): 60; Base price (EUR): 9.50 | net"; got != want {
		t.Errorf("row 2 = %q, want %q", got, want)
	}
	if got, want := rows[1].Locator, "Parcel Service Guide > Parcel size classes > row 2"; got != want {
		t.Errorf("locator = %q, want %q", got, want)
	}
	var prose []string
	for _, b := range doc.Blocks {
		if b.ContentType == retrieval.ContentText {
			prose = append(prose, b.Text)
			if strings.Contains(b.Text, "|") {
				t.Errorf("table line left in prose: %q", b.Text)
			}
		}
	}
	want := []string{
		"The size class sets the base price before zone and fuel surcharges. The length is the longest side of the parcel.",
		"A parcel that exceeds the XL limits is freight and must be booked through the freight desk.",
		"We do not carry loose lithium batteries.",
	}
	if strings.Join(prose, "\n---\n") != strings.Join(want, "\n---\n") {
		t.Errorf("prose blocks:\n got %q\nwant %q", prose, want)
	}
	// The order is the document's: prose, the rows, prose.
	if doc.Blocks[0].ContentType != retrieval.ContentText || doc.Blocks[1].ContentType != retrieval.ContentTableRow {
		t.Errorf("blocks out of order: %+v", doc.Blocks)
	}
}

func TestParseMarkdownPipeWithoutDelimiterIsProse(t *testing.T) {
	doc, err := ingest.Parse("a.md", []byte("# A\n\nUse a | b to pipe.\nNext line.\n"), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Tables) != 0 || len(rowBlocks(doc)) != 0 {
		t.Errorf("a lone pipe made a table: %+v", doc.Tables)
	}
}

func TestUnwrapHardWrappedParagraphs(t *testing.T) {
	src := "# Guide\n\n" +
		"A parcel is declared lost 10 working days after its last tracking scan. The\n" +
		"sender can then claim the declared value up to the liability cap of the\n" +
		"service.\n\n" +
		"- first item that is long enough to be wrapped by an editor at the\n" +
		"  margin of the page\n" +
		"- second item\n\n" +
		"```\ncode line that is long enough to look like a wrapped line of prose\nnext\n```\n"
	doc, err := ingest.Parse("g.md", []byte(src), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "A parcel is declared lost 10 working days after its last tracking scan. The sender can then claim the declared value up to the liability cap of the service.\n\n" +
		"- first item that is long enough to be wrapped by an editor at the margin of the page\n" +
		"- second item\n\n" +
		"```\ncode line that is long enough to look like a wrapped line of prose\nnext\n```"
	if got := doc.Blocks[0].Text; got != want {
		t.Errorf("text:\n got %q\nwant %q", got, want)
	}
}

func TestUnwrapJoinsCJKWithoutSpace(t *testing.T) {
	src := "转专业每学年办理一次，申请时间为春季学期第三周至第五周。申请人须已修满\n第一学年全部必修课，且平均学分绩点不低于 3.0。\n"
	doc, err := ingest.Parse("规定.txt", []byte(src), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := doc.Blocks[0].Text, "转专业每学年办理一次，申请时间为春季学期第三周至第五周。申请人须已修满第一学年全部必修课，且平均学分绩点不低于 3.0。"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

// workbook writes an xlsx file with the given sheets (name, rows).
func workbook(t *testing.T, sheets [][2]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, s := range sheets {
		name := s[0].(string)
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		for r, row := range s[1].([][]any) {
			for c, v := range row {
				cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
				if err := f.SetCellValue(name, cell, v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseXLSX(t *testing.T) {
	data := workbook(t, [][2]any{
		{"Fees", [][]any{{"item", "fee_eur"}, {"Sofa", 30}, {}, {"Mattress", 18.5}}},
		{"Empty", [][]any{}},
		{"Days", [][]any{{}, {"district", "day"}, {"Harbour", "Tuesday"}}},
	})
	doc, err := ingest.Parse("waste/schedule.xlsx", data, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowBlocks(doc)
	var got []string
	for _, b := range rows {
		got = append(got, b.Title+" | "+b.Locator+" | "+b.Text)
	}
	want := []string{
		"Fees | sheet Fees > row 2 | item: Sofa; fee_eur: 30",
		"Fees | sheet Fees > row 4 | item: Mattress; fee_eur: 18.5",
		"Days | sheet Days > row 3 | district: Harbour; day: Tuesday",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
	if len(doc.Tables) != 2 || doc.Tables[1].Name != "Days" {
		t.Errorf("tables: %+v", doc.Tables)
	}
	if h := rows[0].Headings; len(h) != 2 || h[0] != "schedule" || h[1] != "Fees" {
		t.Errorf("headings %q", h)
	}
}

func TestParseXLSXCommitted(t *testing.T) {
	p := filepath.Join("..", "testdata", "kbs", "registrar", "docs", "证明材料办理.xlsx")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ingest.Parse("证明材料办理.xlsx", data, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range rowBlocks(doc) {
		if b.Locator == "sheet 办理时限 > row 4" {
			found = true
			if !strings.Contains(b.Text, "材料类型: 英文成绩单") || !strings.Contains(b.Text, "办理时限（工作日）: 3") {
				t.Errorf("row 4 = %q", b.Text)
			}
		}
	}
	if !found {
		t.Errorf("no row 4 in sheet 办理时限: %+v", rowBlocks(doc))
	}
}

func TestParseXLSXRefusesZipBomb(t *testing.T) {
	// A part that claims to expand to 1 GiB: refused before it is inflated.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "xl/worksheets/sheet1.xml", Method: zip.Deflate,
		CompressedSize64: 2, UncompressedSize64: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte{3, 0})
	zw.Close()
	_, err = ingest.Parse("bomb.xlsx", buf.Bytes(), ingest.Options{})
	if !errors.Is(err, ingest.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestParseXLSXRefusesNonWorkbook(t *testing.T) {
	_, err := ingest.Parse("notes.xlsx", []byte("just some text"), ingest.Options{})
	if !errors.Is(err, ingest.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestParseHTMLTables(t *testing.T) {
	page := `<html><body><h1>Guide</h1><h2>Bins</h2>
<table><caption>Bulky items</caption><thead><tr><td>item</td><td>fee_eur</td></tr></thead>
<tbody><tr><td>Sofa</td><td>30</td></tr><tr><td>Mattress</td><td>18</td></tr></tbody></table>
<table><tr><th>Day</th><td>Monday</td></tr><tr><th>Bin</th><td>grey</td></tr></table>
</body></html>`
	doc, err := ingest.Parse("guide.html", []byte(page), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowBlocks(doc)
	if len(rows) != 2 || rows[1].Text != "item: Mattress; fee_eur: 18" || rows[1].Title != "Bulky items" ||
		rows[1].Locator != "Guide > Bins > row 2" {
		t.Fatalf("rows: %+v", rows)
	}
	// A table without a header row (headers down the side) stays text.
	last := doc.Blocks[len(doc.Blocks)-1]
	if last.ContentType != retrieval.ContentText || !strings.Contains(last.Text, "Day | Monday") {
		t.Errorf("side-header table: %+v", last)
	}
}
