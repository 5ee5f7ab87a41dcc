package ingest

import "testing"

func TestNoTextWarningRanges(t *testing.T) {
	for _, c := range []struct {
		pages []int
		want  string
	}{
		{[]int{2}, "page 2: no text layer, OCR not configured"},
		{[]int{3, 7, 8, 9}, "pages 3, 7-9: no text layer, OCR not configured"},
		{[]int{1, 2, 5, 10, 11}, "pages 1-2, 5, 10-11: no text layer, OCR not configured"},
	} {
		if got := noTextWarning(c.pages); got != c.want {
			t.Errorf("noTextWarning(%v) = %q, want %q", c.pages, got, c.want)
		}
	}
}
