package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// TestPDFPartlyScannedWarns ingests a PDF whose page 2 is only a picture
// (testdata/docs/partly-scanned.pdf): its text pages are ingested, the
// report warns about page 2 alone, and no chunk comes from page 2.
func TestPDFPartlyScannedWarns(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"partly-scanned.pdf", "timetable.pdf"} {
		if err := os.WriteFile(filepath.Join(dir, n), readCorpus(t, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var chunks []retrieval.Chunk
	store := &captureStore{put: func(cs []retrieval.Chunk) { chunks = append(chunks, cs...) }}
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, ingest.Options{})
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	if rep.Files != 2 {
		t.Errorf("files %d, want 2", rep.Files)
	}
	want := []ingest.FileWarning{{Path: filepath.Join(dir, "partly-scanned.pdf"), Message: "page 2: no text layer, OCR not configured"}}
	if !slices.Equal(rep.Warnings, want) {
		t.Errorf("warnings %q, want %q", rep.Warnings, want)
	}
	var pages []string
	var text strings.Builder
	for _, c := range chunks {
		if c.Meta[retrieval.MetaOrigin] != "partly-scanned.pdf" {
			continue
		}
		if strings.TrimSpace(c.Text) == "" {
			t.Errorf("empty chunk %+v", c.Meta)
		}
		pages = append(pages, c.Meta[ingest.MetaPage])
		text.WriteString(c.Text + "\n")
	}
	if slices.Contains(pages, "2") || !slices.Contains(pages, "1") || !slices.Contains(pages, "3") {
		t.Errorf("chunk pages %q, want 1 and 3 only", pages)
	}
	for _, s := range []string{"every hour from seven", "last boat leaves at nine"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("%q not ingested from the text pages:\n%s", s, text.String())
		}
	}
}

// TestPDFParseWarnings checks that Parse keeps the warning on the Document.
func TestPDFParseWarnings(t *testing.T) {
	doc, err := ingest.Parse("partly-scanned.pdf", readCorpus(t, "partly-scanned.pdf"), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"page 2: no text layer, OCR not configured"}; !slices.Equal(doc.Warnings, want) {
		t.Errorf("warnings %q, want %q", doc.Warnings, want)
	}
	doc, err = ingest.Parse("timetable.pdf", readCorpus(t, "timetable.pdf"), ingest.Options{})
	if err != nil || len(doc.Warnings) != 0 {
		t.Errorf("text PDF: warnings %q, err %v", doc.Warnings, err)
	}
}
