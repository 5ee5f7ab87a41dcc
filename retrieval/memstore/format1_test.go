package memstore

import (
	"context"
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// writeFormat1 writes a directory as the first file format left it: no
// manifest, a snapshot of generation 1 holding snap, and a log of
// generation 1 holding records (a trailing partial record when torn).
func writeFormat1(t *testing.T, dir string, snap []retrieval.Chunk, records [][]byte, torn bool) {
	t.Helper()
	b := []byte(snapMagic)
	b = binary.LittleEndian.AppendUint32(b, formatV1)
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 8)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(snap)))
	for i := range snap {
		b = appendChunk(b, &snap[i])
	}
	b = binary.LittleEndian.AppendUint32(b, crc(b))
	if err := os.WriteFile(filepath.Join(dir, snapName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	l := []byte(walMagic)
	l = binary.LittleEndian.AppendUint32(l, formatV1)
	l = binary.LittleEndian.AppendUint64(l, 1)
	for _, p := range records {
		l = binary.LittleEndian.AppendUint32(l, uint32(len(p)))
		l = binary.LittleEndian.AppendUint32(l, crc(p))
		l = append(l, p...)
	}
	if torn {
		l = append(l, 200, 0, 0, 0, 1, 2, 3)
	}
	if err := os.WriteFile(filepath.Join(dir, walName), l, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFormat1IsReadAndUpgraded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFormat1(t, dir, testChunks("a", 3), [][]byte{
		encodeUpsert(testChunks("b", 2)),
		encodeDelete("t", "a"),
		encodeUpsert(testChunks("c", 1)),
	}, true)
	want := []string{"b-0", "b-1", "c-0"}

	before := fileState(t, dir)
	r, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedIDs(t, r); !slices.Equal(got, want) {
		t.Errorf("read-only open of format 1: %v, want %v", got, want)
	}
	r.Close()
	if !maps.Equal(before, fileState(t, dir)) {
		t.Error("a read-only open changed a format-1 directory")
	}

	s := mustOpen(t, Options{Dir: dir})
	if got := storedIDs(t, s); !slices.Equal(got, want) {
		t.Errorf("writable open of format 1: %v, want %v", got, want)
	}
	if err := s.Upsert(ctx, testChunks("d", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if ok, err := readManifest(dir); !ok || err != nil {
		t.Errorf("no manifest after the upgrade: %v", err)
	}
	f, _ := os.Open(filepath.Join(dir, walName))
	h, err := readLogHeader(f)
	f.Close()
	if err != nil || h.version != formatVersion {
		t.Errorf("log after the upgrade: version %d, %v", h.version, err)
	}
	s = mustOpen(t, Options{Dir: dir})
	defer s.Close()
	if got := storedIDs(t, s); !slices.Equal(got, append(want, "d-0")) {
		t.Errorf("after the upgrade: %v", got)
	}
}
