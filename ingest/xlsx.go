package ingest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Bounds of the spreadsheet loader. A workbook is a zip archive whose
// sheets may expand far beyond the file's own size, so the archive is
// measured before it is opened and every sheet is counted as it is read.
const (
	// MaxSheetUnzipped is the largest total uncompressed size of a
	// workbook's parts; a larger workbook (a zip bomb, or a data dump
	// better loaded as records) is refused with ErrTooLarge.
	MaxSheetUnzipped = 64 << 20
	// MaxSheetCells is the largest number of cells read from one workbook;
	// beyond it the file is refused with ErrTooLarge.
	MaxSheetCells = 1 << 20
	// maxSheetParts bounds the number of entries of the archive.
	maxSheetParts = 10000
	// sheetXMLInMemory is the size from which excelize spills a sheet's
	// XML to a temporary file instead of memory.
	sheetXMLInMemory = 8 << 20
)

// checkZip refuses a workbook whose archive is not a zip file
// (ErrMalformed) or expands beyond MaxSheetUnzipped (ErrTooLarge).
func checkZip(data []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("%w: not a spreadsheet (xlsx is a zip archive): %w", ErrMalformed, err)
	}
	if len(zr.File) > maxSheetParts {
		return fmt.Errorf("%w: %d parts in the workbook, limit %d", ErrTooLarge, len(zr.File), maxSheetParts)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > MaxSheetUnzipped {
			return fmt.Errorf("%w: the workbook expands to more than %d bytes", ErrTooLarge, MaxSheetUnzipped)
		}
	}
	return nil
}

// loadXLSX makes one Table per sheet of an Excel workbook, in the
// workbook's order: the sheet's first non-empty row is its header, each
// later non-empty row a Row located "row N" as the spreadsheet numbers it,
// within the table's locator "sheet NAME". Cells are read as the sheet
// displays them (formatted numbers and dates). A sheet without rows adds
// nothing.
func loadXLSX(doc *Document, data []byte) error {
	if err := checkZip(data); err != nil {
		return err
	}
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit: MaxSheetUnzipped, UnzipXMLSizeLimit: sheetXMLInMemory})
	if err != nil {
		return fmt.Errorf("%w: xlsx: %w", ErrMalformed, err)
	}
	defer f.Close()
	cells := 0
	for _, name := range f.GetSheetList() {
		t, n, err := readSheet(f, name, MaxSheetCells-cells)
		if err != nil {
			return err
		}
		cells += n
		t.Headings = []string{doc.Title, name}
		if t.Header != nil {
			doc.AddTable(t)
		}
	}
	return nil
}

// readSheet reads one sheet, refusing it with ErrTooLarge when it has more
// than budget cells. It returns the table and the cells read.
func readSheet(f *excelize.File, name string, budget int) (Table, int, error) {
	t := Table{Name: name, Locator: "sheet " + name}
	rows, err := f.Rows(name)
	if err != nil {
		return t, 0, fmt.Errorf("%w: sheet %q: %w", ErrMalformed, name, err)
	}
	defer rows.Close()
	cells := 0
	for n := 1; rows.Next(); n++ {
		cols, err := rows.Columns()
		if err != nil {
			return t, cells, fmt.Errorf("%w: sheet %q row %d: %w", ErrMalformed, name, n, err)
		}
		if cells += len(cols); cells > budget {
			return t, cells, fmt.Errorf("%w: sheet %q: more than %d cells in the workbook", ErrTooLarge, name, MaxSheetCells)
		}
		empty := true
		for i, c := range cols {
			cols[i] = strings.TrimSpace(c)
			empty = empty && cols[i] == ""
		}
		switch {
		case empty:
		case t.Header == nil:
			t.Header = cols
		default:
			t.Rows = append(t.Rows, Row{Cells: cols, Locator: "row " + strconv.Itoa(n)})
		}
	}
	if err := rows.Error(); err != nil {
		return t, cells, fmt.Errorf("%w: sheet %q: %w", ErrMalformed, name, err)
	}
	return t, cells, nil
}
