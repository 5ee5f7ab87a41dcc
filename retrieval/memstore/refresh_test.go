package memstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// A reader that loaded a store during a compaction (the new snapshot in
// place, the new log not yet) must, once the new log appears, read the
// records appended to it from its start. It used to keep "unknown" (-1)
// as its position when it refreshed while that log was still empty, and
// every later Refresh failed with "negative offset": the soak found it
// after some 50,000 refreshes beside a compacting writer.
func TestRefreshAfterLoadingDuringCompaction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	doc := func(id, text string) []retrieval.Chunk {
		return []retrieval.Chunk{{ID: id + "#0", DocID: id, Text: text, Vector: []float32{1, 0}}}
	}
	w, err := Open(ctx, Options{Dir: dir, Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.ReplaceDocument(ctx, retrieval.Scope{}, "a", doc("a", "alpha")); err != nil {
		t.Fatal(err)
	}
	// The directory as a compaction leaves it between its two renames: the
	// new snapshot beside the log it was made from.
	old, err := os.ReadFile(filepath.Join(dir, walName))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, walName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	// A reader that finds it so on its last attempt takes the snapshot.
	defer func(n int) { readAttempts = n }(readAttempts)
	readAttempts = 1
	r, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The writer comes back and starts the new log.
	w, err = Open(ctx, Options{Dir: dir, Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := r.Refresh(ctx); err != nil { // the new log holds no record yet
		t.Fatalf("refresh of the new, empty log: %v", err)
	}
	for i, text := range []string{strings.Repeat("bravo ", 100), "charlie", "delta"} {
		id := string(rune('b' + i))
		if err := w.ReplaceDocument(ctx, retrieval.Scope{}, id, doc(id, text)); err != nil {
			t.Fatal(err)
		}
		if err := r.Refresh(ctx); err != nil {
			t.Fatalf("record %d: refresh: %v", i, err)
		}
		if r.Len() != w.Len() {
			t.Fatalf("record %d: the reader holds %d chunks, the writer %d", i, r.Len(), w.Len())
		}
	}
}
