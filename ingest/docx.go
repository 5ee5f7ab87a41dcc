package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// oleMagic starts an OLE compound file: a legacy .doc, or an Office file
// encrypted with a password (the zip package is then inside, encrypted).
var oleMagic = []byte{0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1}

// isOffice reports whether the name has one of the binary document
// extensions.
func isOffice(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".pdf", ".docx", ".pptx":
		return true
	}
	return false
}

// loadOffice loads a PDF, DOCX or PPTX file into doc. A loader panic
// becomes an error matching ErrMalformed.
func loadOffice(ctx context.Context, doc *Document, ext string, data []byte, o DocOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s loader panic: %v", ErrMalformed, ext, r)
		}
	}()
	switch strings.ToLower(ext) {
	case ".pdf":
		return loadPDF(ctx, doc, data, o)
	case ".docx":
		return loadDOCX(ctx, doc, data, o)
	case ".pptx":
		return loadPPTX(ctx, doc, data, o)
	}
	return fmt.Errorf("%w: %q", ErrUnsupported, ext)
}

// officeZip is an Office archive read within the limits of DocOptions.
type officeZip struct {
	files  map[string]*zip.File
	budget int64 // bytes that may still be decompressed
	limit  int64
}

// openOfficeZip opens data as the zip package of a DOCX or PPTX file.
func openOfficeZip(data []byte, o DocOptions) (*officeZip, error) {
	if bytes.HasPrefix(data, oleMagic) {
		return nil, fmt.Errorf("%w: a password-protected (or legacy binary) Office file", ErrEncrypted)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a zip package (corrupt or truncated): %w", ErrMalformed, err)
	}
	if len(zr.File) > DefaultMaxZipEntries {
		return nil, fmt.Errorf("%w: %d archive entries, limit %d", ErrDocLimit, len(zr.File), DefaultMaxZipEntries)
	}
	z := &officeZip{files: map[string]*zip.File{}, budget: o.maxUnzipped(), limit: o.maxUnzipped()}
	for _, f := range zr.File {
		z.files[strings.TrimPrefix(f.Name, "/")] = f
	}
	return z, nil
}

// read decompresses one entry, charging it to the budget: a zip bomb
// fails with ErrDocLimit once the budget is spent, whatever sizes the
// archive declares. A missing entry gives nil, nil.
func (z *officeZip) read(name string) ([]byte, error) {
	f := z.files[name]
	if f == nil {
		return nil, nil
	}
	if f.UncompressedSize64 > uint64(z.budget) {
		return nil, fmt.Errorf("%w: %s declares %d bytes uncompressed, more than the %d left of DocOptions.MaxUnzipped (%d)",
			ErrDocLimit, name, f.UncompressedSize64, z.budget, z.limit)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, z.budget+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s (corrupt or truncated): %w", ErrMalformed, name, err)
	}
	if int64(len(b)) > z.budget {
		return nil, fmt.Errorf("%w: %s decompresses to more than the %d bytes left of DocOptions.MaxUnzipped (%d): a zip bomb?",
			ErrDocLimit, name, z.budget, z.limit)
	}
	z.budget -= int64(len(b))
	return b, nil
}

// coreTitle reads the title of docProps/core.xml, "" when there is none.
func (z *officeZip) coreTitle() string {
	b, err := z.read("docProps/core.xml")
	if err != nil || b == nil {
		return ""
	}
	var core struct {
		Title string `xml:"title"`
	}
	if xml.Unmarshal(b, &core) != nil {
		return ""
	}
	return strings.Join(strings.Fields(core.Title), " ")
}

// docxStyle is what the reader needs of a paragraph style.
type docxStyle struct {
	name    string
	basedOn string
	outline int // outline level + 1; 0 when the style sets none
}

// headingName matches the names of built-in heading styles: "heading 1",
// "Heading1".
var headingName = regexp.MustCompile(`^heading ?([1-9])$`)

// docxStyles maps style ids to their heading level and title role.
type docxStyles map[string]docxStyle

// parseStyles reads word/styles.xml.
func parseStyles(b []byte) docxStyles {
	st := docxStyles{}
	if b == nil {
		return st
	}
	var x struct {
		Styles []struct {
			ID      string `xml:"styleId,attr"`
			Name    val    `xml:"name"`
			BasedOn val    `xml:"basedOn"`
			Outline *val   `xml:"pPr>outlineLvl"`
		} `xml:"style"`
	}
	if xml.Unmarshal(b, &x) != nil {
		return st
	}
	for _, s := range x.Styles {
		d := docxStyle{name: strings.ToLower(strings.TrimSpace(s.Name.Val)), basedOn: s.BasedOn.Val}
		if s.Outline != nil {
			if n, err := strconv.Atoi(s.Outline.Val); err == nil && n >= 0 && n < 9 {
				d.outline = n + 1
			}
		}
		st[s.ID] = d
	}
	return st
}

// val is an element whose w:val attribute is all that matters.
type val struct {
	Val string `xml:"val,attr"`
}

// level returns the heading level of a style (0 for body text) and
// whether it is the document title: the outline level it or a style it is
// based on sets, else a built-in heading name or id.
func (st docxStyles) level(id string) (int, bool) {
	for i := 0; id != "" && i < 10; i++ {
		s, ok := st[id]
		lid := strings.ToLower(id)
		if lid == "title" || s.name == "title" {
			return 0, true
		}
		if s.outline > 0 {
			return s.outline, false
		}
		for _, n := range []string{s.name, lid} {
			if m := headingName.FindStringSubmatch(n); m != nil {
				return int(m[1][0] - '0'), false
			}
		}
		if !ok {
			break
		}
		id = s.basedOn
	}
	return 0, false
}

// docxNumbering tells numbered lists from bulleted ones:
// numId -> level -> number format.
type docxNumbering map[string]map[string]string

func parseNumbering(b []byte) docxNumbering {
	nb := docxNumbering{}
	if b == nil {
		return nb
	}
	var x struct {
		Abstract []struct {
			ID     string `xml:"abstractNumId,attr"`
			Levels []struct {
				Ilvl   string `xml:"ilvl,attr"`
				NumFmt val    `xml:"numFmt"`
			} `xml:"lvl"`
		} `xml:"abstractNum"`
		Nums []struct {
			ID       string `xml:"numId,attr"`
			Abstract val    `xml:"abstractNumId"`
		} `xml:"num"`
	}
	if xml.Unmarshal(b, &x) != nil {
		return nb
	}
	abs := map[string]map[string]string{}
	for _, a := range x.Abstract {
		m := map[string]string{}
		for _, l := range a.Levels {
			m[l.Ilvl] = l.NumFmt.Val
		}
		abs[a.ID] = m
	}
	for _, n := range x.Nums {
		nb[n.ID] = abs[n.Abstract.Val]
	}
	return nb
}

// docxPara is a paragraph of document.xml.
type docxPara struct {
	text    strings.Builder
	style   string
	outline int // from the paragraph's own properties, level + 1
	numID   string
	ilvl    string
	list    bool
}

// loadDOCX reads a Word file: paragraphs under their heading path (from
// paragraph styles, localised ones through their outline level), list
// items marked, tables as rows.
func loadDOCX(ctx context.Context, doc *Document, data []byte, o DocOptions) error {
	z, err := openOfficeZip(data, o)
	if err != nil {
		return err
	}
	body, err := z.read("word/document.xml")
	if err != nil {
		return err
	}
	if body == nil {
		return fmt.Errorf("%w: no word/document.xml: not a Word document", ErrMalformed)
	}
	stylesXML, err := z.read("word/styles.xml")
	if err != nil {
		return err
	}
	numXML, err := z.read("word/numbering.xml")
	if err != nil {
		return err
	}
	if t := z.coreTitle(); t != "" {
		doc.Title = t
	}
	ctx, cancel := o.deadline(ctx)
	defer cancel()
	r := docxReader{doc: doc, styles: parseStyles(stylesXML), numbering: parseNumbering(numXML),
		counters: map[string]int{}, s: sections{doc: doc}}
	if err := r.read(ctx, body); err != nil {
		return err
	}
	return nil
}

// docxReader walks document.xml.
type docxReader struct {
	doc       *Document
	styles    docxStyles
	numbering docxNumbering
	counters  map[string]int // numId/ilvl -> last number given
	s         sections
	titleSeen bool
}

// maxXMLDepth bounds element nesting, against documents built to exhaust
// the stack.
const maxXMLDepth = 256

func (r *docxReader) read(ctx context.Context, body []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	var (
		para     *docxPara
		inText   bool
		inPPr    bool
		depth    int
		tblDepth int
		table    [][]string
		row      []string
		cell     []string
		n        int
	)
	for {
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%w: reading stopped: %w", ErrDocLimit, err)
			}
		}
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: word/document.xml: %w", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxXMLDepth {
				return fmt.Errorf("%w: elements nested more than %d deep", ErrMalformed, maxXMLDepth)
			}
			switch t.Name.Local {
			case "tbl":
				tblDepth++
				if tblDepth == 1 {
					r.s.flush()
					table = nil
				}
			case "tr":
				if tblDepth == 1 {
					row = nil
				}
			case "tc":
				if tblDepth == 1 {
					cell = nil
				}
			case "p":
				para = &docxPara{}
			case "pPr":
				inPPr = true
			case "pStyle":
				if para != nil && inPPr {
					para.style = attr(t, "val")
				}
			case "outlineLvl":
				if para != nil && inPPr {
					if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 && v < 9 {
						para.outline = v + 1
					}
				}
			case "numPr":
				if para != nil && inPPr {
					para.list = true
				}
			case "numId":
				if para != nil && inPPr {
					para.numID = attr(t, "val")
				}
			case "ilvl":
				if para != nil && inPPr {
					para.ilvl = attr(t, "val")
				}
			case "t":
				inText = true
			case "tab":
				if para != nil && !inPPr {
					para.text.WriteByte('\t')
				}
			case "br", "cr":
				if para != nil {
					para.text.WriteByte('\n')
				}
			}
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "t":
				inText = false
			case "pPr":
				inPPr = false
			case "p":
				if para == nil {
					break
				}
				text := strings.TrimSpace(para.text.String())
				if tblDepth > 0 {
					if text != "" {
						cell = append(cell, text)
					}
				} else {
					r.paragraph(para, text)
				}
				para = nil
			case "tc":
				if tblDepth == 1 {
					row = append(row, strings.Join(cell, " "))
				}
			case "tr":
				if tblDepth == 1 {
					table = append(table, row)
				}
			case "tbl":
				tblDepth--
				if tblDepth == 0 {
					r.table(table)
				}
			}
		case xml.CharData:
			if inText && para != nil {
				para.text.Write(t)
			}
		}
	}
	r.s.flush()
	return nil
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// paragraph adds a body paragraph: a heading opens a section, a list
// item gets its bullet or number.
func (r *docxReader) paragraph(p *docxPara, text string) {
	if text == "" {
		return
	}
	level, title := r.styles.level(p.style)
	if p.outline > 0 {
		level = p.outline
	}
	if title && !r.titleSeen {
		r.titleSeen = true
		r.doc.Title = strings.Join(strings.Fields(text), " ")
		return
	}
	if level > 0 {
		r.s.heading(level, strings.Join(strings.Fields(text), " "))
		return
	}
	if p.list {
		key := p.numID + "/" + p.ilvl
		marker := "- "
		if f := r.numbering[p.numID][p.ilvl]; f != "" && f != "bullet" && f != "none" {
			r.counters[key]++
			marker = strconv.Itoa(r.counters[key]) + ". "
		}
		indent := ""
		if n, err := strconv.Atoi(p.ilvl); err == nil && n > 0 {
			indent = strings.Repeat("  ", min(n, 8))
		}
		r.s.body.WriteString(indent + marker + text + "\n")
		return
	}
	r.s.body.WriteString(text + "\n\n")
}

// table adds a table as rows, the first row its header, under the
// current heading path.
func (r *docxReader) table(rows [][]string) {
	if len(rows) == 0 {
		return
	}
	if len(rows) == 1 { // a one-row table is a layout box: keep its text
		r.s.body.WriteString(strings.Join(rows[0], " ") + "\n\n")
		return
	}
	hs := append([]string(nil), r.s.path...)
	if len(hs) == 0 || hs[0] != r.doc.Title {
		hs = append([]string{r.doc.Title}, hs...)
	}
	name := ""
	if len(r.s.path) > 0 {
		name = r.s.path[len(r.s.path)-1]
	}
	t := Table{Name: name, Headings: hs, Locator: strings.Join(hs, " > "), Header: rows[0]}
	for _, c := range rows[1:] {
		t.Rows = append(t.Rows, Row{Cells: c})
	}
	r.doc.AddTable(t)
}
