package ingest

import (
	"errors"
	"testing"

	"github.com/xuri/excelize/v2"
)

func TestReadSheetRefusesTooManyCells(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	for r := 1; r <= 20; r++ {
		for c := 1; c <= 5; c++ {
			cell, _ := excelize.CoordinatesToCellName(c, r)
			if err := f.SetCellValue("Sheet1", cell, r*c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := readSheet(f, "Sheet1", 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("budget 99, 100 cells: err = %v, want ErrTooLarge", err)
	}
	tb, n, err := readSheet(f, "Sheet1", 100)
	if err != nil || n != 100 || len(tb.Rows) != 19 {
		t.Errorf("budget 100: %d cells, %d rows, err %v", n, len(tb.Rows), err)
	}
}
