package memstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// replacedFile writes size bytes to dir/name, opens it for writing as a
// compaction opens the file it replaces, renames another file over it and
// returns the open replaced file and a reader's descriptor of it.
func replacedFile(t *testing.T, dir, name string, size int) (f, reader *os.File) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if reader, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	if err := os.WriteFile(path+".new", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	return f, reader
}

func sizeOf(t *testing.T, f *os.File) int64 {
	t.Helper()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestReleaseFile: a replaced file is cut down a step at a time to at
// most one step and closed; the file now at its path is left alone.
func TestReleaseFile(t *testing.T) {
	dir := t.TempDir()
	f, reader := replacedFile(t, dir, "old", 10_000)
	if err := releaseFile(context.Background(), f, filepath.Join(dir, "old"), 1024); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(); err == nil {
		t.Error("releaseFile left the file open")
	}
	// 10,000 bytes less nine steps of 1024.
	if got := sizeOf(t, reader); got != 784 {
		t.Errorf("replaced file cut to %d bytes, want 784", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "old")); err != nil || string(b) != "new" {
		t.Errorf("the file in place reads %q, %v; want \"new\"", b, err)
	}
}

// TestReleaseFileInPlace: a file that is still the one at its path is
// only closed, never cut.
func TestReleaseFileInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := releaseFile(context.Background(), f, path, 1024); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 5000 {
		t.Fatalf("file in place after releaseFile: %v, %v; want 5000 bytes", st, err)
	}
	if _, err := f.Stat(); err == nil {
		t.Error("releaseFile left the file open")
	}
}

// TestReleaseFileCancelled: once ctx ends the file is closed at the next
// pause, the rest freed at once.
func TestReleaseFileCancelled(t *testing.T) {
	dir := t.TempDir()
	f, reader := replacedFile(t, dir, "old", 10_000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := releaseFile(ctx, f, filepath.Join(dir, "old"), 1024); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(); err == nil {
		t.Error("releaseFile left the file open")
	}
	if got := sizeOf(t, reader); got != 10_000-1024 {
		t.Errorf("cancelled release cut the file to %d bytes, want one step (%d)", got, 10_000-1024)
	}
	if err := releaseFile(ctx, nil, filepath.Join(dir, "old"), 1024); err != nil {
		t.Errorf("releaseFile(nil): %v", err)
	}
}
