package vector

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckMappedFault: a mapped page the file can no longer give (the
// file cut short after the mapping) fails the checksum pass with
// ErrCorrupt instead of crashing the process.
func TestCheckMappedFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.idx")
	size := 4 * os.Getpagesize()
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, unmap, err := mapFile(f, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	fr := &fileReader{crc: crc32.New(castagnoli)}
	if err := checkMapped(fr, b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("checkMapped of a cut file: %v", err)
	}
}
