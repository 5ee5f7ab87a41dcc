package ingest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/adaptrag/adaptrag/retrieval"
)

// slideName matches the slide parts of a PowerPoint package.
var slideName = regexp.MustCompile(`^ppt/slides/slide([0-9]+)\.xml$`)

// loadPPTX reads a PowerPoint file: one section per slide, titled by the
// slide's title placeholder and located "slide N", tables as rows.
func loadPPTX(ctx context.Context, doc *Document, data []byte, o DocOptions) error {
	z, err := openOfficeZip(data, o)
	if err != nil {
		return err
	}
	type slide struct {
		n    int
		name string
	}
	var slides []slide
	for name := range z.files {
		if m := slideName.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			slides = append(slides, slide{n, name})
		}
	}
	if len(slides) == 0 {
		return fmt.Errorf("%w: no slides: not a PowerPoint presentation", ErrMalformed)
	}
	if len(slides) > o.maxPages() {
		return fmt.Errorf("%w: %d slides, limit %d (DocOptions.MaxPages)", ErrDocLimit, len(slides), o.maxPages())
	}
	slices.SortFunc(slides, func(a, b slide) int { return a.n - b.n })
	if t := z.coreTitle(); t != "" {
		doc.Title = t
	}
	ctx, cancel := o.deadline(ctx)
	defer cancel()
	for i, s := range slides {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: reading stopped: %w", ErrDocLimit, err)
		}
		b, err := z.read(s.name)
		if err != nil {
			return err
		}
		if err := readSlide(doc, b, i+1); err != nil {
			return err
		}
	}
	return nil
}

// readSlide adds one slide's text and tables.
func readSlide(doc *Document, b []byte, n int) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = false
	var (
		title, bodyText  strings.Builder
		para             strings.Builder
		isTitle, inText  bool
		inTable          int
		table            [][]string
		row              []string
		cell             []string
		depth, shapeText int
		tables           [][][]string
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: slide %d: %w", ErrMalformed, n, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxXMLDepth {
				return fmt.Errorf("%w: slide %d: elements nested more than %d deep", ErrMalformed, n, maxXMLDepth)
			}
			switch t.Name.Local {
			case "sp":
				isTitle = false
				shapeText = 0
			case "ph":
				if ty := attr(t, "type"); ty == "title" || ty == "ctrTitle" {
					isTitle = true
				}
			case "tbl":
				inTable++
				table = nil
			case "tr":
				row = nil
			case "tc":
				cell = nil
			case "p":
				para.Reset()
			case "t":
				inText = true
			}
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				txt := strings.TrimSpace(para.String())
				switch {
				case txt == "":
				case inTable > 0:
					cell = append(cell, txt)
				case isTitle:
					if title.Len() > 0 {
						title.WriteByte(' ')
					}
					title.WriteString(txt)
				default:
					bodyText.WriteString(txt + "\n")
					shapeText++
				}
			case "sp":
				if shapeText > 0 {
					bodyText.WriteString("\n")
				}
			case "tc":
				row = append(row, strings.Join(cell, " "))
			case "tr":
				table = append(table, row)
			case "tbl":
				inTable--
				if len(table) > 0 {
					tables = append(tables, table)
				}
			}
		case xml.CharData:
			if inText {
				para.Write(t)
			}
		}
	}
	loc := "slide " + strconv.Itoa(n)
	hs := []string{doc.Title}
	if tt := strings.Join(strings.Fields(title.String()), " "); tt != "" {
		hs = append(hs, tt)
		loc += " > " + tt
	}
	if body := cleanBody(bodyText.String()); body != "" {
		doc.Blocks = append(doc.Blocks, Block{Headings: hs, Text: body, ContentType: retrieval.ContentText, Locator: loc})
	}
	for _, tb := range tables {
		if len(tb) < 2 {
			continue
		}
		t := Table{Name: hs[len(hs)-1], Headings: hs, Locator: loc, Header: tb[0]}
		for _, r := range tb[1:] {
			t.Rows = append(t.Rows, Row{Cells: r})
		}
		doc.AddTable(t)
	}
	return nil
}
