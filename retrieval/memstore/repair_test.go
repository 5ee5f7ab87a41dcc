package memstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// repairFixture writes a store with a snapshot of batches s0..s4 and a log
// of batches l0..l9 (8 chunks each), closed cleanly. It returns the
// directory, the offsets of the log records, and the committed state.
func repairFixture(t *testing.T) (dir string, recs []int64, want *Store) {
	t.Helper()
	ctx := context.Background()
	dir = t.TempDir()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1, NoSync: true})
	for i := range 5 {
		s.Upsert(ctx, testChunks(fmt.Sprint("s", i), 8))
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		recs = append(recs, s.disk.walSize)
		s.Upsert(ctx, testChunks(fmt.Sprint("l", i), 8))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, recs, mustOpen(t, Options{Dir: copyDir(t, dir), ReadOnly: true})
}

func mutate(t *testing.T, dir, name string, fn func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// without returns the state of want without the chunks of the batches
// named by prefixes.
func without(t *testing.T, want *Store, prefixes ...string) string {
	t.Helper()
	n := newStore(Options{})
	want.mu.RLock()
	var keep []retrieval.Chunk
	for k, iid := range want.byKey.all(want.recs) {
		if slices.ContainsFunc(prefixes, func(p string) bool { return k.id == p || strings.HasPrefix(k.id, p+"-") }) {
			continue
		}
		c := want.recs[iid].Chunk
		c.Vector, _ = want.vec.Vector(iid)
		keep = append(keep, c)
	}
	want.mu.RUnlock()
	slices.SortFunc(keep, func(a, b retrieval.Chunk) int { return strings.Compare(a.ID, b.ID) })
	if len(keep) > 0 {
		n.applyUpsert(keep)
	}
	return dump(n)
}

func repaired(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("the repaired store does not open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRepairMidLogDamage(t *testing.T) {
	ctx := context.Background()
	dir, recs, want := repairFixture(t)
	mutate(t, dir, walName, func(b []byte) []byte { b[recs[4]+40] ^= 0xff; return b })
	damaged, _ := os.ReadFile(filepath.Join(dir, walName))

	dry, err := Repair(ctx, dir, RepairOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Clean() || dry.Rewritten {
		t.Errorf("dry run: %+v", dry)
	}
	if _, err := Open(ctx, Options{Dir: dir, ReadOnly: true}); !errors.Is(err, retrieval.ErrCorrupt) {
		t.Fatalf("the dry run changed the store: %v", err)
	}

	rep, err := Repair(ctx, dir, RepairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Clean() || !rep.Rewritten || len(rep.Lost) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	l := rep.Lost[0]
	if l.File != walName || l.Offset != recs[4] || l.Bytes != recs[5]-recs[4] || l.FirstRecord != 10 || l.LastRecord != 10 || rep.LostRecords != 1 {
		t.Errorf("lost = %+v (records %d), want record 10 at %d, %d bytes", l, rep.LostRecords, recs[4], recs[5]-recs[4])
	}
	if rep.SnapshotChunks != 40 || rep.RecordsKept != 9 || rep.Chunks != 14*8 {
		t.Errorf("kept %d snapshot chunks, %d records, %d chunks; want 40, 9, 112", rep.SnapshotChunks, rep.RecordsKept, rep.Chunks)
	}
	if got := dump(repaired(t, dir)); got != without(t, want, "l4") {
		t.Error("the repaired store is not the committed state less the damaged record")
	}
	aside, err := os.ReadFile(filepath.Join(dir, rep.SetAside[walName]))
	if err != nil || !slices.Equal(aside, damaged) {
		t.Errorf("the damaged log was not kept aside as it was: %v", err)
	}
	// A second repair finds nothing to do.
	again, err := Repair(ctx, dir, RepairOptions{})
	if err != nil || !again.Clean() || again.Rewritten || len(again.Problems) != 0 {
		t.Errorf("second repair: %+v, %v", again, err)
	}
	// The repaired store takes writes.
	s := mustOpen(t, Options{Dir: dir})
	if err := s.Upsert(ctx, testChunks("new", 2)); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestRepairCases(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string, recs []int64)
		clean  bool     // nothing lost
		gone   []string // batches lost
		check  func(t *testing.T, rep RepairReport)
	}{
		{name: "healthy", clean: true, check: func(t *testing.T, rep RepairReport) {
			if rep.Rewritten || len(rep.Problems) != 0 {
				t.Errorf("a healthy store was rewritten: %+v", rep)
			}
		}},
		{name: "torn tail after a crash", clean: true, damage: func(t *testing.T, dir string, _ []int64) {
			os.Remove(filepath.Join(dir, lockName))
			appendBytes(dir, walName, []byte{50, 0, 0, 0, 1, 2, 3})
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.TornTail != 7 || rep.Rewritten {
				t.Errorf("torn tail: %+v", rep)
			}
		}},
		{name: "manifest deleted", clean: true, damage: func(t *testing.T, dir string, _ []int64) {
			os.Remove(filepath.Join(dir, manifestName))
		}, check: func(t *testing.T, rep RepairReport) {
			if !rep.Rewritten {
				t.Errorf("a missing manifest was not rewritten: %+v", rep)
			}
		}},
		{name: "manifest damaged", clean: true, damage: func(t *testing.T, dir string, _ []int64) {
			mutate(t, dir, manifestName, func(b []byte) []byte { b[3] = 'x'; return b })
		}},
		{name: "snapshot chunk damaged", gone: []string{"s2-5"}, damage: func(t *testing.T, dir string, _ []int64) {
			// Find chunk s2-5 in the snapshot and damage its text.
			mutate(t, dir, snapName, func(b []byte) []byte {
				i := strings.Index(string(b), "word5 common s2")
				b[i] ^= 0x01
				return b
			})
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.LostChunks != 1 || rep.SnapshotChunks != 39 || rep.RecordsKept != 10 {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "snapshot deleted", gone: []string{"s0", "s1", "s2", "s3", "s4"}, damage: func(t *testing.T, dir string, _ []int64) {
			os.Remove(filepath.Join(dir, snapName))
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.LostRecords != 5 || rep.RecordsKept != 10 {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "log deleted", gone: []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"}, damage: func(t *testing.T, dir string, _ []int64) {
			os.Remove(filepath.Join(dir, walName))
		}},
		{name: "older log put back", gone: []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"}, damage: func(t *testing.T, dir string, _ []int64) {
			// The log as it was before the compaction: generation 0.
			b := encodeLogHeader(0, 0)
			b = appendFrame(b, 1, encodeUpsert(testChunks("s0", 8)))
			os.WriteFile(filepath.Join(dir, walName), b, 0o644)
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.LostRecords != 10 {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "log header damaged", clean: true, damage: func(t *testing.T, dir string, _ []int64) {
			mutate(t, dir, walName, func(b []byte) []byte { b[14] ^= 0xff; return b })
		}, check: func(t *testing.T, rep RepairReport) {
			// Only the header's bytes are lost: every record is found
			// by its checksum and sequence number.
			if rep.RecordsKept != 10 || len(rep.Lost) != 0 || !rep.Rewritten {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "snapshot header damaged", clean: true, damage: func(t *testing.T, dir string, _ []int64) {
			mutate(t, dir, snapName, func(b []byte) []byte { b[30] ^= 0xff; return b })
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.SnapshotChunks != 40 || rep.RecordsKept != 10 || len(rep.Lost) != 0 || !rep.Rewritten {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "log cut short after a clean close", gone: []string{"l8", "l9"}, damage: func(t *testing.T, dir string, recs []int64) {
			mutate(t, dir, walName, func(b []byte) []byte { return b[:recs[8]] })
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.LostRecords != 2 {
				t.Errorf("%+v", rep)
			}
		}},
		{name: "zeroed range across records", gone: []string{"l2", "l3", "l4"}, damage: func(t *testing.T, dir string, recs []int64) {
			mutate(t, dir, walName, func(b []byte) []byte {
				clear(b[recs[2]+10 : recs[4]+30])
				return b
			})
		}, check: func(t *testing.T, rep RepairReport) {
			if rep.LostRecords != 3 || rep.Lost[0].FirstRecord != 8 || rep.Lost[0].LastRecord != 10 {
				t.Errorf("%+v", rep)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, recs, want := repairFixture(t)
			if tc.damage != nil {
				tc.damage(t, dir, recs)
			}
			rep, err := Repair(ctx, dir, RepairOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Clean() != tc.clean {
				t.Errorf("Clean() = %v, want %v: %+v", rep.Clean(), tc.clean, rep)
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
			if got, w := dump(repaired(t, dir)), without(t, want, tc.gone...); got != w {
				t.Errorf("repaired state differs from the committed state less %v", tc.gone)
			}
			for name, aside := range rep.SetAside {
				if _, err := os.Stat(filepath.Join(dir, aside)); err != nil {
					t.Errorf("%s kept aside as %s: %v", name, aside, err)
				}
			}
		})
	}
}

func TestRepairRefusals(t *testing.T) {
	ctx := context.Background()
	if _, err := Repair(ctx, filepath.Join(t.TempDir(), "nothing"), RepairOptions{}); !errors.Is(err, ErrNoStore) {
		t.Errorf("absent directory: %v, want ErrNoStore", err)
	}
	if _, err := Repair(ctx, t.TempDir(), RepairOptions{}); !errors.Is(err, ErrNoStore) {
		t.Errorf("empty directory: %v, want ErrNoStore", err)
	}
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir})
	defer s.Close()
	before := fileState(t, dir)
	if _, err := Repair(ctx, dir, RepairOptions{}); !errors.Is(err, ErrLocked) {
		t.Errorf("store open for writing: %v, want ErrLocked", err)
	}
	if !maps.Equal(before, fileState(t, dir)) {
		t.Error("a refused repair changed the directory")
	}
}

// Repair keeps the records of a log older than the snapshot that follow
// the snapshot's (a compaction that crashed before replacing the log), as
// Open does: with the snapshot damaged too, the repaired store holds them.
func TestRepairKeepsStaleLogTail(t *testing.T) {
	ctx := context.Background()
	a := t.TempDir()
	s := mustOpen(t, Options{Dir: a, CompactBytes: -1, NoSync: true})
	s.Upsert(ctx, testChunks("x", 3))
	s.Upsert(ctx, testChunks("y", 2))
	s.Close()
	b := copyDir(t, a)
	s = mustOpen(t, Options{Dir: b, CompactBytes: -1, NoSync: true})
	s.Upsert(ctx, testChunks("z", 2))
	s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, "x")
	s.Close()
	s = mustOpen(t, Options{Dir: a, CompactBytes: -1, NoSync: true})
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	logB, err := os.ReadFile(filepath.Join(b, walName))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a, walName), logB, 0o644)
	// Damage the snapshot's last chunk (a chunk of y).
	mutate(t, a, snapName, func(b []byte) []byte { b[len(b)-12] ^= 0xff; return b })
	rep, err := Repair(ctx, a, RepairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RecordsKept != 2 {
		t.Errorf("kept %d log records, want 2 (the upsert of z and the delete of x)", rep.RecordsKept)
	}
	s = mustOpen(t, Options{Dir: a})
	defer s.Close()
	got := storedIDs(t, s)
	if !slices.Contains(got, "z-0") || !slices.Contains(got, "z-1") || slices.Contains(got, "x-0") || !slices.Contains(got, "y-0") {
		t.Errorf("after repair: %v, want z-0, z-1 and y-0 and no chunk of x", got)
	}
}
