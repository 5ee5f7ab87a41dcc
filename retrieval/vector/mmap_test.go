package vector

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestSpilledMapped: int8 copies mapped from the file (mapInt8) behave as
// those read into memory: the spill tests pass with every copy mapped; an
// index mapped and one read from the same bytes answer alike through the
// same writes, which never reach the file; and a damaged copy fails the
// open.
func TestSpilledMapped(t *testing.T) {
	defer func(m int) { mapMin = m }(mapMin)
	mapMin = 0
	t.Run("index", TestSpilledIndex)
	t.Run("writes", TestSpilledWrites)

	const dim = 48
	vecs := clustered(61, 7000, dim, 40)
	built := buildIndex(t, vecs[:5000], Options{ListSize: 256})
	f, off := spillFile(t, built)
	file, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := ReadIndexAt(f, off, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadIndexAt(bytes.NewReader(file), off, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !mapped.sp.mapped || read.sp.mapped {
		t.Fatalf("mapped: from the file %v, from bytes %v", mapped.sp.mapped, read.sp.mapped)
	}
	queries := clustered(62, 30, dim, 40)
	sameIndex(t, read, mapped, queries)
	// Replacements rewrite int8 copies in place, removals move the last
	// one into the freed slot: both write to the mapped pages.
	r := rand.New(rand.NewPCG(63, 64))
	for range 3000 {
		id := uint32(r.IntN(5000))
		if r.IntN(3) == 0 {
			mapped.Remove(id)
			read.Remove(id)
			continue
		}
		v := vecs[5000+r.IntN(2000)]
		if err := mapped.Add(id, v); err != nil {
			t.Fatal(err)
		}
		if err := read.Add(id, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mapped.check(); err != nil {
		t.Fatal(err)
	}
	sameIndex(t, read, mapped, queries)
	if now, err := os.ReadFile(f.Name()); err != nil || !bytes.Equal(now, file) {
		t.Fatalf("the writes reached the file: %v", err)
	}

	// A byte of the int8 copies (after the float32 originals and their
	// checksums) damaged: the mapped open fails as the read one does.
	n := int64(mapped.sp.n)
	at := mapped.sp.base + n*(dim*4+4) + n*dim/2
	bad := bytes.Clone(file)
	bad[at] ^= 0x10
	path := filepath.Join(t.TempDir(), "bad.idx")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := ReadIndexAt(g, off, Options{ResidentLimit: 100}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged int8 copy, mapped: %v", err)
	}
	if _, err := ReadIndexAt(bytes.NewReader(bad), off, Options{ResidentLimit: 100}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged int8 copy, read: %v", err)
	}
}
