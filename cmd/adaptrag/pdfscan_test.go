package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestWarnsAboutPagesWithoutText ingests a PDF whose page 2 is only
// a picture: the run succeeds, stderr warns about page 2 of that file,
// and --json carries the same warning.
func TestIngestWarnsAboutPagesWithoutText(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "docs", "partly-scanned.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pdf := filepath.Join(dir, "docs", "partly-scanned.pdf")
	if err := os.MkdirAll(filepath.Dir(pdf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pdf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	store := "embedded:" + filepath.Join(dir, "kb")
	const msg = "page 2: no text layer, OCR not configured"
	out, errs, code := cli(t, "ingest", "--store", store, filepath.Join(dir, "docs"))
	if code != 0 || !strings.Contains(out, "ingested 1 files") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if want := "warning: " + pdf + ": " + msg; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}

	out, errs, code = cli(t, "ingest", "--json", "--store", store, filepath.Join(dir, "docs"))
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s\n%s", code, out, errs)
	}
	var rep ingestOutput
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	if rep.Files != 1 || rep.Chunks == 0 || len(rep.Errors) != 0 {
		t.Errorf("report %+v, want one file with chunks and no error", rep)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0].Path != pdf || rep.Warnings[0].Message != msg {
		t.Errorf("warnings %+v, want %s: %s", rep.Warnings, pdf, msg)
	}
}
