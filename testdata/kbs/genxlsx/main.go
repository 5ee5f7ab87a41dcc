// Command genxlsx writes the spreadsheets of the test knowledge bases from
// their CSV sources, so that the committed .xlsx files can be reproduced:
//
//	go run ./testdata/kbs/genxlsx
//
// For every folder testdata/kbs/DOMAIN/sheets/BOOK, it writes
// testdata/kbs/DOMAIN/docs/BOOK.xlsx with one sheet per CSV file in the
// folder, in name order; a file "N_NAME.csv" becomes sheet NAME.
package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

var order = regexp.MustCompile(`^\d+_`)

func main() {
	root := "testdata/kbs"
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	books, err := filepath.Glob(filepath.Join(root, "*", "sheets", "*"))
	if err != nil {
		fail(err)
	}
	for _, book := range books {
		out := filepath.Join(filepath.Dir(filepath.Dir(book)), "docs", filepath.Base(book)+".xlsx")
		if err := write(book, out); err != nil {
			fail(fmt.Errorf("%s: %w", book, err))
		}
		fmt.Println("wrote", out)
	}
}

func write(dir, out string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	f := excelize.NewFile()
	defer f.Close()
	for i, p := range files {
		name := order.ReplaceAllString(strings.TrimSuffix(filepath.Base(p), ".csv"), "")
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				return err
			}
		} else if _, err := f.NewSheet(name); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
		if err != nil {
			return err
		}
		for r, rec := range recs {
			for c, v := range rec {
				cell, err := excelize.CoordinatesToCellName(c+1, r+1)
				if err != nil {
					return err
				}
				var val any = v
				if n, err := strconv.ParseFloat(v, 64); err == nil && r > 0 {
					val = n // numbers are stored as numbers, as a person typing them would get
				}
				if err := f.SetCellValue(name, cell, val); err != nil {
					return err
				}
			}
		}
	}
	if err := f.SetDocProps(&excelize.DocProperties{Created: "2026-01-01T00:00:00Z", Modified: "2026-01-01T00:00:00Z", Creator: "genxlsx"}); err != nil {
		return err
	}
	return f.SaveAs(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genxlsx:", err)
	os.Exit(1)
}
