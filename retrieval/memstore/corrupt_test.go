package memstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// The corruption matrix damages each file of a committed store (flipped
// bits, zeroed ranges, truncation, deletion, bytes appended) at many
// offsets and checks that every open either recovers exactly the
// committed state or fails with an error matching retrieval.ErrCorrupt or
// ErrNoStore, without changing the directory when read-only. Offsets are
// drawn from a fixed seed; for a longer run set
//
//	ADAPTRAG_CORRUPT_OFFSETS=500 go test -run TestCorruptionMatrix -v ./retrieval/memstore/
//
// (random offsets per file and kind of damage, default 8) and optionally
// ADAPTRAG_CORRUPT_SEED.

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// matrixStore builds the committed store the matrix damages: a snapshot
// (three documents, one replaced, one deleted before it) and a log of
// five records after it (upsert, replace, delete, upsert, replace). It
// returns the directory and the offsets where the log records start.
func matrixStore(t *testing.T) (string, []int64) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1, NoSync: true})
	sc := retrieval.Scope{Tenant: "t"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Upsert(ctx, docChunks("a0", 2)))
	must(s.Upsert(ctx, docChunks("a1", 3)))
	must(s.Upsert(ctx, docChunks("a2", 1)))
	must(s.ReplaceDocument(ctx, sc, "a1", docChunks("a1", 4)))
	must(s.DeleteDocument(ctx, sc, "a0"))
	must(s.Compact(ctx))
	var recs []int64
	step := func(err error) {
		t.Helper()
		must(err)
		recs = append(recs, s.disk.walSize)
	}
	recs = append(recs, s.disk.walSize)
	step(s.Upsert(ctx, docChunks("b0", 2)))
	step(s.ReplaceDocument(ctx, sc, "a1", docChunks("a1", 5)))
	step(s.DeleteDocument(ctx, sc, "a2"))
	step(s.Upsert(ctx, docChunks("b1", 3)))
	step(s.ReplaceDocument(ctx, sc, "b0", docChunks("b0", 7)))
	must(s.Close())
	// A fixed creation time, so that every run damages the same bytes.
	must(os.WriteFile(filepath.Join(dir, manifestName), encodeManifest(time.Unix(1_700_000_000, 0)), 0o644))
	return dir, recs // recs ends with the log's size
}

type damageCase struct {
	file string
	kind string
	off  int64
	n    int64 // bytes zeroed or appended
	bit  byte
}

func (c damageCase) String() string {
	return fmt.Sprintf("%s %s at %d (n %d)", c.file, c.kind, c.off, c.n)
}

// apply damages the copy of the store in dir and returns the offset of
// the first byte it changed; it reports false when the case does not apply
// (an offset past the end) or changes nothing.
func (c damageCase) apply(t *testing.T, dir string) (int64, bool) {
	p := filepath.Join(dir, c.file)
	if c.kind == "delete" {
		return 0, os.Remove(p) == nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	orig := slices.Clone(b)
	switch c.kind {
	case "flip":
		if c.off >= int64(len(b)) {
			return 0, false
		}
		b[c.off] ^= 1 << c.bit
	case "zero":
		if c.off >= int64(len(b)) {
			return 0, false
		}
		clear(b[c.off:min(int64(len(b)), c.off+c.n)])
	case "truncate":
		if c.off >= int64(len(b)) {
			return 0, false
		}
		b = b[:c.off]
	case "extend":
		r := rand.New(rand.NewPCG(uint64(c.off), uint64(c.n)))
		for range c.n {
			b = append(b, byte(r.IntN(256)))
		}
	}
	first := int64(0)
	for first < int64(min(len(b), len(orig))) && b[first] == orig[first] {
		first++
	}
	if len(b) == len(orig) && first == int64(len(b)) {
		return 0, false // zeros over zeros
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return first, true
}

func TestCorruptionMatrix(t *testing.T) { corruptionMatrix(t, false) }

// TestCorruptionMatrixRecords runs the matrix on a store whose Close saved
// the records file (records.go), which opens of the acknowledged state
// adopt instead of reading the snapshot and the log: records.idx is
// damaged too, and when a writer adopted it over a damaged snapshot or
// log, its background check must report the damage (Verified) and its
// compaction leave files that hold the committed state.
func TestCorruptionMatrixRecords(t *testing.T) {
	lowAdopt(t)
	corruptionMatrix(t, true)
}

func corruptionMatrix(t *testing.T, records bool) {
	// Nothing writes concurrently here: a read-only open need not retry.
	defer func(n int) { readAttempts = n }(readAttempts)
	readAttempts = 1
	seed := uint64(envInt(t, "ADAPTRAG_CORRUPT_SEED", 1))
	per := envInt(t, "ADAPTRAG_CORRUPT_OFFSETS", 8)
	r := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()

	pristine, recs := matrixStore(t)
	last := recs[len(recs)-2] // where the last record starts
	// Two states of the same files: every write acknowledged, and the
	// last write still in flight (the high-water mark stops before it:
	// a crash there may lose that write, and only that one).
	inFlight := copyDir(t, pristine)
	note, _ := readCleanNote(pristine)
	note.size, note.seq = uint64(last), note.seq-1
	if err := os.WriteFile(filepath.Join(inFlight, lockName), note.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	// And with the mark itself lost: then a log cut at a record boundary
	// cannot be told from a whole one, nor a damaged last record from a
	// torn write (two faults), which is counted apart; any other damage
	// must still be caught.
	noMark := copyDir(t, pristine, lockName)
	load := func(dir string) string {
		s, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return dump(s)
	}
	full := load(pristine)
	files := []string{manifestName, snapName, walName, lockName}
	if records {
		if _, err := os.Stat(filepath.Join(pristine, recordsName)); err != nil {
			t.Fatalf("the fixture's Close saved no records file: %v", err)
		}
		if load(copyDir(t, pristine, recordsName)) != full {
			t.Fatal("the store read from its records file differs from the one read from its snapshot and log")
		}
		files = append(files, recordsName)
	}
	// And a compaction that crashed after renaming its snapshot into
	// place and before replacing the log: the snapshot (a generation
	// newer than the log) holds the first two records of the log, and the
	// three after them, written while it ran, are only in the old log.
	stale := copyDir(t, pristine)
	{
		d := copyDir(t, pristine, lockName)
		mutate(t, d, walName, func(b []byte) []byte { return b[:recs[2]] })
		s := mustOpen(t, Options{Dir: d, CompactBytes: -1, NoSync: true})
		if err := s.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		s.Close()
		snap, err := os.ReadFile(filepath.Join(d, snapName))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stale, snapName), snap, 0o644); err != nil {
			t.Fatal(err)
		}
		if load(stale) != full {
			t.Fatal("the store left by a compaction cut short does not open to the committed state")
		}
	}
	states := []struct {
		name string
		dir  string
	}{{"acknowledged", pristine}, {"last write in flight", inFlight}, {"high-water mark lost", noMark}, {"compaction cut short", stale}}

	prefixDir := copyDir(t, pristine)
	mutate(t, prefixDir, walName, func(b []byte) []byte { return b[:last] })
	os.Remove(filepath.Join(prefixDir, lockName))
	prefix := load(prefixDir)
	if prefix == full {
		t.Fatal("the fixture's last record changes nothing")
	}
	// The states a log cut at each record boundary gives.
	cuts := map[string]bool{}
	for _, o := range recs[:len(recs)-1] {
		d := copyDir(t, pristine, lockName)
		mutate(t, d, walName, func(b []byte) []byte { return b[:o] })
		cuts[load(d)] = true
	}
	walSize := recs[len(recs)-1]

	var cases []damageCase
	for _, name := range files {
		st, err := os.Stat(filepath.Join(pristine, name))
		if err != nil {
			t.Fatal(err)
		}
		size := st.Size()
		offs := []int64{0, 1, size / 2, size - 1, size - 4}
		switch name {
		case walName:
			offs = append(offs, walHeaderLen-1, walHeaderLen)
			for _, o := range recs {
				offs = append(offs, o, o+1, o+recHeaderLen-1, o+recHeaderLen)
			}
		case snapName:
			offs = append(offs, snapHeaderLen-1, snapHeaderLen, snapHeaderLen+frameLen)
		}
		for range per {
			offs = append(offs, r.Int64N(size))
		}
		slices.Sort(offs)
		offs = slices.Compact(offs)
		cases = append(cases, damageCase{file: name, kind: "delete"})
		for _, o := range offs {
			if o < 0 {
				continue
			}
			cases = append(cases,
				damageCase{file: name, kind: "flip", off: o, bit: byte(r.IntN(8))},
				damageCase{file: name, kind: "zero", off: o, n: 1 + r.Int64N(64)},
				damageCase{file: name, kind: "truncate", off: o},
			)
		}
		for i := range 1 + per/4 {
			cases = append(cases, damageCase{file: name, kind: "extend", off: size + int64(i), n: 1 + r.Int64N(64)})
		}
	}

	var tried, exact, lostInFlight, twoFaults, corrupt, noStore, scrubbed int
	for _, st := range states {
		for _, c := range cases {
			d := copyDir(t, st.dir)
			first, ok := c.apply(t, d)
			if !ok {
				continue
			}
			// Damage confined to the last record may cost that record
			// when it is not acknowledged.
			allowed := map[string]bool{full: true}
			if st.dir != pristine && st.dir != stale && c.file == walName && c.kind != "delete" && first >= last {
				allowed[prefix] = true
			}
			cut := st.dir == noMark && c.file == walName &&
				(c.kind == "truncate" || c.kind == "zero" && c.off+c.n >= walSize)
			for _, ro := range []bool{true, false} {
				tried++
				before := fileState(t, d)
				s, err := Open(ctx, Options{Dir: d, ReadOnly: ro, NoSync: true})
				what := fmt.Sprintf("%s, %s, read-only %v", st.name, c, ro)
				switch {
				case err == nil:
					if records && !ro {
						// Read from the check's state: the compaction it
						// starts on damage may already have dropped the
						// file (recordsOnDisk).
						s.bgMu.Lock()
						adopted := s.scrubFiles
						s.bgMu.Unlock()
						s.waitScrub()
						done, dmg := s.Verified()
						damaged := adopted && (c.file == snapName || c.file == walName)
						switch {
						case !done:
							t.Errorf("%s: the check of the files is not done", what)
						case damaged && !errors.Is(dmg, retrieval.ErrCorrupt):
							t.Errorf("%s: adopted the records file over damaged files, and the check found %v", what, dmg)
						case !damaged && dmg != nil:
							t.Errorf("%s: the check reports damage: %v", what, dmg)
						case damaged:
							scrubbed++
						}
					}
					got := dump(s)
					s.Close()
					switch {
					case got == full:
						exact++
					case allowed[got] && st.dir == inFlight:
						lostInFlight++
					case allowed[got]:
						twoFaults++ // the mark is lost and the last record damaged
					case cut && cuts[got]:
						twoFaults++
					default:
						t.Errorf("%s: opened with a state other than the committed one (%d chunks)", what, s.Len())
						continue
					}
					if !ro {
						// What the writer recovered is what is on disk now.
						if again := load(d); again != got {
							t.Errorf("%s: reopening gives another state", what)
						}
						if records {
							// And the files themselves hold it, without
							// the records file.
							if again := load(copyDir(t, d, recordsName)); again != got {
								t.Errorf("%s: the snapshot and log left hold another state", what)
							}
						}
					}
				case errors.Is(err, retrieval.ErrCorrupt):
					corrupt++
				case errors.Is(err, ErrNoStore):
					noStore++
				default:
					t.Errorf("%s: err = %v, want nil, ErrCorrupt or ErrNoStore", what, err)
				}
				if ro && !maps.Equal(before, fileState(t, d)) {
					t.Errorf("%s: the read-only open changed the directory", what)
				}
			}
		}
	}
	t.Logf("corruption matrix (seed %d, %d random offsets per file and kind): %d opens of damaged stores: "+
		"%d recovered the committed state exactly, %d lost only the write in flight, %d refused with ErrCorrupt, %d with ErrNoStore; "+
		"%d more, with the high-water mark lost too (two faults), read a log cut at a record boundary as whole or dropped a damaged last record",
		seed, per, tried, exact, lostInFlight, corrupt, noStore, twoFaults)
	if records {
		t.Logf("%d writable opens adopted the records file over a damaged snapshot or log, and their check found it", scrubbed)
		if scrubbed == 0 {
			t.Error("no open adopted the records file over a damaged snapshot or log")
		}
	}
}
