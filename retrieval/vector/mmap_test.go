package vector

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
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

	// A byte of an int8 copy damaged (after the float32 originals and
	// the two arrays of checksums): the mapped open leaves it to its
	// first use, which makes it again from its original, so the index
	// answers as the intact one; read into memory, the copies are checked
	// at once and the open fails.
	n := int64(mapped.sp.n)
	row := n / 2
	at := mapped.sp.base + n*(dim*4+8) + row*dim + 3
	bad := bytes.Clone(file)
	bad[at] ^= 0x10
	g := writeFile(t, bad)
	healed, err := ReadIndexAt(g, off, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatalf("damaged int8 copy, mapped: %v", err)
	}
	intact, err := ReadIndexAt(f, off, Options{ResidentLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Searches and the background check side by side (run with -race):
	// each copy is checked once, by whichever comes first.
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for _, q := range queries[g*10 : g*10+10] {
				healed.Search(q, 20, nil)
			}
		})
	}
	for from := 0; from >= 0; from = healed.CheckCopies(from, 100) {
	}
	wg.Wait()
	sameIndex(t, intact, healed, queries)
	if healed.Repaired() != 1 || healed.Damage() != nil {
		t.Fatalf("repaired %d copies (want 1), damage %v", healed.Repaired(), healed.Damage())
	}
	if _, err := ReadIndexAt(bytes.NewReader(bad), off, Options{ResidentLimit: 100}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged int8 copy, read: %v", err)
	}

	// The copy and its original both damaged: the check clears the copy
	// and the index reports the damage, found by a check or a search.
	bad[mapped.sp.base+row*dim*4+5] ^= 0x10
	for _, scan := range []bool{true, false} {
		ix, err := ReadIndexAt(writeFile(t, bad), off, Options{ResidentLimit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if scan {
			for from := 0; from >= 0; from = ix.CheckCopies(from, 1000) {
			}
		} else {
			v, _ := intact.Vector(ix.ids[row])
			ix.Search(v, 10, nil)
		}
		if err := ix.Damage(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("copy and original damaged (checked %v): %v", scan, err)
		}
		if slices.ContainsFunc(ix.sp.row(uint32(row)), func(c int8) bool { return c != 0 }) {
			t.Fatalf("the damaged copy was not cleared")
		}
	}
}

// writeFile writes b to a new file and returns it open.
func writeFile(t *testing.T, b []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
