package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgressBarDraws(t *testing.T) {
	var buf bytes.Buffer
	bar := newBar(&buf, 10)
	bar(Progress{FilesTotal: 0}) // nothing to ingest: nothing drawn
	if buf.Len() != 0 {
		t.Fatalf("drew %q for an empty run", buf.String())
	}
	bar(Progress{FilesDone: 0, FilesTotal: 4})
	bar(Progress{FilesDone: 2, FilesTotal: 4, Chunks: 17, Path: "a-rather-long-file-name.md"})
	bar(Progress{FilesDone: 4, FilesTotal: 4, Chunks: 30, Path: "b.md"})
	lines := strings.Split(buf.String(), "\r")[1:]
	want := []string{
		"[..........] 0/4 files, 0 chunks ",
		"[#####.....] 2/4 files, 17 chunks a-rather-long-file-name.md",
		// The last draw blanks the rest of the longer previous line and ends it.
		"[##########] 4/4 files, 30 chunks b.md",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Fatalf("draw %d = %q, want prefix %q", i, lines, w)
		}
	}
	if last := lines[2]; !strings.HasSuffix(last, " \n") || len(last) != len(lines[1])+1 {
		t.Errorf("last draw %q does not blank the previous one and end the line", last)
	}
}

func TestProgressBarQuietWhenNotTerminal(t *testing.T) {
	var buf bytes.Buffer
	NewProgressBar(&buf)(Progress{FilesDone: 1, FilesTotal: 2})
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	NewProgressBar(f)(Progress{FilesDone: 1, FilesTotal: 2})
	st, _ := f.Stat()
	if buf.Len() != 0 || st.Size() != 0 {
		t.Errorf("wrote %d bytes to a buffer and %d to a file; want silence", buf.Len(), st.Size())
	}
}
