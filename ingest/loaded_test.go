package ingest_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
)

// Loaded sees each stored document once, in order, and never a file the
// run refused (too large, unsupported), so what a caller derives from the
// documents stays within the run's limits.
func TestLoadedSeesStoredDocumentsOnly(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.md":    "# A\n\nAlpha.\n",
		"b.csv":   "code,meaning\nE1,bad password\n",
		"big.txt": strings.Repeat("x", 2048),
		"c.png":   "x",
	})
	var got []string
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: newMemStore(0)}, []string{dir}, ingest.Options{
		MaxFileSize: 1024,
		Loaded:      func(d ingest.Document) { got = append(got, d.Path+":"+strconv.Itoa(len(d.Tables))) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 2 || len(rep.Errors) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !slices.Equal(got, []string{"a.md:0", "b.csv:1"}) {
		t.Errorf("Loaded saw %v, want the two stored documents with their tables", got)
	}
}
