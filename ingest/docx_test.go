package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

// testStyles are the styles of a Word file saved by a localised Word:
// built-in headings under numeric ids, a custom chapter style that sets
// an outline level, and one based on it.
const testStyles = `<?xml version="1.0" encoding="UTF-8"?>
<w:styles ` + wNS + `>
<w:style w:type="paragraph" w:styleId="a"><w:name w:val="Normal"/></w:style>
<w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 1"/><w:basedOn w:val="a"/></w:style>
<w:style w:type="paragraph" w:styleId="2"><w:name w:val="heading 2"/><w:basedOn w:val="a"/></w:style>
<w:style w:type="paragraph" w:styleId="a3"><w:name w:val="Kapitel"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="a4"><w:name w:val="Kapitel rot"/><w:basedOn w:val="a3"/></w:style>
<w:style w:type="paragraph" w:styleId="a5"><w:name w:val="Title"/></w:style>
</w:styles>`

const testNumbering = `<w:numbering ` + wNS + `>
<w:abstractNum w:abstractNumId="3"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>
<w:abstractNum w:abstractNumId="4"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
<w:num w:numId="7"><w:abstractNumId w:val="3"/></w:num>
<w:num w:numId="8"><w:abstractNumId w:val="4"/></w:num>
</w:numbering>`

func wPara(style, text string) string {
	p := "<w:p>"
	if style != "" {
		p += `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return p + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
}

func wItem(numID, text string) string {
	return `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="` + numID + `"/></w:numPr></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
}

func wTable(rows ...[]string) string {
	var b strings.Builder
	b.WriteString("<w:tbl>")
	for _, r := range rows {
		b.WriteString("<w:tr>")
		for _, c := range r {
			b.WriteString("<w:tc>" + wPara("", c) + "</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}

// testDOCX writes a Word file with archive/zip, for exact control of
// what the reader sees.
func testDOCX(t testing.TB, body string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, content := range map[string]string{
		"[Content_Types].xml": `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"docProps/core.xml":   `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>渡轮值班手册</dc:title></cp:coreProperties>`,
		"word/styles.xml":     testStyles,
		"word/numbering.xml":  testNumbering,
		"word/document.xml":   `<w:document ` + wNS + `><w:body>` + body + `</w:body></w:document>`,
	} {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(content))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var testDOCXBody = wPara("a5", "Watch rules") +
	wPara("1", "安全须知") +
	wPara("", "开船前清点乘客人数。") +
	wItem("7", "Sound the horn.") + wItem("7", "Call the harbour office.") +
	wItem("8", "Keep the gangway clear.") +
	wPara("2", "Lifebuoys") +
	`<w:p><w:r><w:t>Port side</w:t></w:r><w:r><w:tab/><w:t>two buoys</w:t></w:r><w:r><w:br/><w:t>Starboard: one</w:t></w:r></w:p>` +
	wTable([]string{"Deck", "Buoys"}, []string{"Upper", "4"}, []string{"Lower", "2"}) +
	wPara("a4", "Kapitel zwei") +
	`<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Direct outline</w:t></w:r></w:p>` +
	wPara("", "Under a paragraph that sets its own outline level.")

// TestDOCXLocalisedStyles reads headings from numeric style ids, from an
// outline level set by a style, inherited through basedOn, or set on the
// paragraph itself; lists get their numbers and bullets; the table's rows
// are located under their heading path.
func TestDOCXLocalisedStyles(t *testing.T) {
	doc, err := Parse("watch.docx", testDOCX(t, testDOCXBody), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Watch rules" {
		// the Title paragraph wins over docProps: it is what the reader sees
		t.Errorf("title %q", doc.Title)
	}
	var locs []string
	byLoc := map[string]string{}
	for _, b := range doc.Blocks {
		locs = append(locs, b.Locator)
		byLoc[b.Locator] = b.Text
	}
	T := doc.Title
	want := []string{
		T + " > 安全须知",
		T + " > 安全须知 > Lifebuoys",
		T + " > 安全须知 > Lifebuoys > row 1",
		T + " > 安全须知 > Lifebuoys > row 2",
		T + " > Kapitel zwei > Direct outline",
	}
	if !slices.Equal(locs, want) {
		t.Fatalf("locators\n got %q\nwant %q", locs, want)
	}
	if got := byLoc[T+" > 安全须知"]; got != "开船前清点乘客人数。\n\n1. Sound the horn.\n2. Call the harbour office.\n- Keep the gangway clear." {
		t.Errorf("list section %q", got)
	}
	if got := byLoc[T+" > 安全须知 > Lifebuoys"]; got != "Port side\ttwo buoys\nStarboard: one" {
		t.Errorf("tab and break %q", got)
	}
	if got := byLoc[T+" > 安全须知 > Lifebuoys > row 2"]; got != "Deck: Lower; Buoys: 2" {
		t.Errorf("row %q", got)
	}
	if len(doc.Tables) != 1 || doc.Tables[0].Name != "Lifebuoys" {
		t.Errorf("tables %+v", doc.Tables)
	}
	for _, b := range doc.Blocks {
		if strings.HasSuffix(b.Locator, "row 1") && b.ContentType != retrieval.ContentTableRow {
			t.Errorf("row block type %q", b.ContentType)
		}
	}
}

// TestDOCXTitleFromCore: without a Title paragraph the title comes from
// docProps/core.xml.
func TestDOCXTitleFromCore(t *testing.T) {
	doc, err := Parse("watch.docx", testDOCX(t, wPara("1", "Heading")+wPara("", "Text.")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "渡轮值班手册" || len(doc.Blocks) != 1 || doc.Blocks[0].Locator != "渡轮值班手册 > Heading" {
		t.Errorf("title %q blocks %+v", doc.Title, doc.Blocks)
	}
}

// TestPPTX reads slides in number order, titled by their title
// placeholder, with a table as rows.
func TestPPTX(t *testing.T) {
	slide := func(title, body, table string) string {
		return `<p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree>` +
			`<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>` + title + `</a:t></a:r></a:p></p:txBody></p:sp>` +
			`<p:sp><p:txBody><a:p><a:r><a:t>` + body + `</a:t></a:r></a:p></p:txBody></p:sp>` + table +
			`</p:spTree></p:cSld></p:sld>`
	}
	tbl := `<p:graphicFrame><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Route</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Minutes</a:t></a:r></a:p></a:txBody></a:tc></a:tr>` +
		`<a:tr><a:tc><a:txBody><a:p><a:r><a:t>North Pier</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>25</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></p:graphicFrame>`
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, content := range map[string]string{
		"ppt/slides/slide10.xml": slide("Late", "Last slide.", ""),
		"ppt/slides/slide2.xml":  slide("Routes", "Two routes run all winter.", tbl),
	} {
		f, _ := w.Create(name)
		f.Write([]byte(content))
	}
	w.Close()
	doc, err := Parse("deck.pptx", b.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, bl := range doc.Blocks {
		got = append(got, bl.Locator+": "+bl.Text)
	}
	want := []string{"slide 1 > Routes: Two routes run all winter.", "slide 1 > Routes > row 1: Route: North Pier; Minutes: 25", "slide 2 > Late: Last slide."}
	if !slices.Equal(got, want) {
		t.Errorf("blocks\n got %q\nwant %q", got, want)
	}
}

// checkDOCXResult is the property both fuzz targets check: no panic, an
// error of the package's kinds, or blocks with text and a locator.
func checkDOCXResult(t *testing.T, data []byte) {
	doc := Document{Title: "fuzz"}
	err := loadDOCX(context.Background(), &doc, data, DocOptions{MaxUnzipped: 4 << 20})
	if err != nil {
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrDocLimit) && !errors.Is(err, ErrEncrypted) {
			t.Fatalf("error of no known kind: %v", err)
		}
		return
	}
	for _, b := range doc.Blocks {
		if strings.TrimSpace(b.Text) == "" || b.Locator == "" {
			t.Fatalf("block without text or locator: %+v", b)
		}
	}
}

// FuzzDOCX feeds whole files (valid Word files, mutated) to the reader.
func FuzzDOCX(f *testing.F) {
	f.Add(testDOCX(f, testDOCXBody))
	for _, n := range []string{"crew-handbook.docx", "lost-property.docx"} {
		if b, err := os.ReadFile("testdata/docs/" + n); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte{})
	f.Fuzz(checkDOCXResult)
}

// FuzzDOCXXML feeds mutated document.xml bodies inside a valid archive,
// where mutations reach the XML reader rather than the zip checks.
func FuzzDOCXXML(f *testing.F) {
	f.Add([]byte(testDOCXBody))
	f.Add([]byte(wTable([]string{"a"}, []string{"b", "c", "d"})))
	f.Add([]byte(`<w:tbl><w:tr><w:tc><w:tbl><w:tr><w:tc><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl>`))
	f.Add([]byte(`<w:p><w:pPr><w:outlineLvl w:val="99"/><w:numPr><w:ilvl w:val="-3"/></w:numPr></w:pPr></w:p>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDOCXResult(t, testDOCX(t, string(body)))
	})
}
