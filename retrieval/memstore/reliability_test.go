package memstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/retrieval"
)

// bigLog writes n batches of 8 chunks to a new store, without compaction,
// and closes it cleanly. It returns the directory and the committed state.
func bigLog(t *testing.T, n int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1, NoSync: true})
	for i := range n {
		if err := s.Upsert(context.Background(), testChunks(fmt.Sprint("p", i), 8)); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// TestMidLogDamageIsAnError: one flipped byte in the middle of the log
// used to be taken for a torn tail, and everything after it was cut off,
// even by a read-only open. Damage followed by intact records must stop
// the open with an error naming the file and the offset, and change
// nothing.
func TestMidLogDamageIsAnError(t *testing.T) {
	dir, _ := bigLog(t, 400)
	wal := filepath.Join(dir, walName)
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	at := int64(len(data) / 3)
	data[at] ^= 0x20
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileState(t, dir)
	for _, ro := range []bool{true, false} {
		s, err := Open(context.Background(), Options{Dir: dir, ReadOnly: ro})
		if err == nil {
			s.Close()
			t.Fatalf("read-only %v: Open of a log damaged in the middle succeeded (%d chunks)", ro, s.Len())
		}
		if !errors.Is(err, retrieval.ErrCorrupt) {
			t.Fatalf("read-only %v: err = %v, want ErrCorrupt", ro, err)
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.File != walName || ce.Offset <= 0 || ce.Offset > at {
			t.Errorf("read-only %v: err = %#v, want a CorruptError on %s at an offset <= %d", ro, ce, walName, at)
		}
		msg := err.Error()
		for _, want := range []string{wal, fmt.Sprintf("offset %d", ce.Offset), "adaptrag repair"} {
			if !strings.Contains(msg, want) {
				t.Errorf("read-only %v: error %q does not mention %q", ro, msg, want)
			}
		}
		if after := fileState(t, dir); !maps.Equal(after, before) {
			t.Errorf("read-only %v: the failed Open changed the directory:\nbefore %v\nafter  %v", ro, before, after)
		}
	}
}

// TestAcknowledgedLastRecordIsProtected: damage to the last record, or a
// log cut short at a record boundary, is the loss of an acknowledged
// write, not a torn tail, after a clean Close as after a crash.
func TestAcknowledgedLastRecordIsProtected(t *testing.T) {
	dir, want := bigLog(t, 5)
	wal := filepath.Join(dir, walName)
	orig, _ := os.ReadFile(wal)
	recLen := int64(recHeaderLen) + int64(len(encodeUpsert(testChunks("p4", 8))))
	cases := map[string][]byte{
		"flip in the last record": func() []byte { b := append([]byte(nil), orig...); b[len(b)-5] ^= 1; return b }(),
		"last record cut off":     orig[:int64(len(orig))-recLen],
		"last record cut short":   orig[:len(orig)-3],
	}
	for name, data := range cases {
		d := copyDir(t, dir)
		os.WriteFile(filepath.Join(d, walName), data, 0o644)
		if s, err := Open(context.Background(), Options{Dir: d}); !errors.Is(err, retrieval.ErrCorrupt) {
			t.Errorf("%s: Open err = %v, want ErrCorrupt", name, err)
			if s != nil {
				s.Close()
			}
		}
		// Without the high-water mark (LOCK lost), the same bytes are a
		// torn tail: the last write is dropped, nothing else.
		d = copyDir(t, d, lockName)
		s, err := Open(context.Background(), Options{Dir: d})
		if err != nil {
			t.Errorf("%s after a crash: %v", name, err)
			continue
		}
		if s.Len() != 4*8 {
			t.Errorf("%s after a crash: %d chunks, want %d", name, s.Len(), 4*8)
		}
		s.Close()
	}
	s := mustOpen(t, Options{Dir: dir})
	if got := dump(s); got != want {
		t.Error("the intact store does not reopen to its committed state")
	}
	// A crash: the files as a killed writer leaves them (copied while it
	// is open). Its last write returned, so its record is protected too.
	if err := s.Upsert(context.Background(), testChunks("late", 2)); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir)
	s.Close()
	mutate(t, crashed, walName, func(b []byte) []byte { b[len(b)-5] ^= 1; return b })
	if s, err := Open(context.Background(), Options{Dir: crashed}); !errors.Is(err, retrieval.ErrCorrupt) {
		t.Errorf("flip in the last acknowledged record after a crash: Open err = %v, want ErrCorrupt", err)
		if s != nil {
			s.Close()
		}
	}
}

// TestReadOnlyChangesNothing: a read-only open never truncates, compacts,
// creates or rewrites anything, whatever it finds.
func TestReadOnlyChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir, _ := bigLog(t, 3)
	s := mustOpen(t, Options{Dir: dir})
	s.Compact(ctx)
	s.Upsert(ctx, testChunks("after", 2))
	s.Close()
	setups := map[string]func(d string){
		"clean":     func(string) {},
		"no LOCK":   func(d string) { os.Remove(filepath.Join(d, lockName)) },
		"torn tail": func(d string) { appendBytes(d, walName, []byte{9, 0, 0, 0, 1, 2}) },
		"torn tail after a crash": func(d string) {
			os.Remove(filepath.Join(d, lockName))
			appendBytes(d, walName, []byte{9, 0, 0, 0, 1, 2})
		},
		"leftover temp files": func(d string) {
			os.WriteFile(filepath.Join(d, snapName+".tmp"), []byte("partial"), 0o644)
			os.WriteFile(filepath.Join(d, walName+".tmp"), []byte("partial"), 0o644)
		},
	}
	for name, setup := range setups {
		d := copyDir(t, dir)
		setup(d)
		before := fileState(t, d)
		r, err := Open(ctx, Options{Dir: d, ReadOnly: true})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r.Len() != 3*8+2 {
			t.Errorf("%s: %d chunks, want %d", name, r.Len(), 3*8+2)
		}
		if err := r.Upsert(ctx, testChunks("x", 1)); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: Upsert on a read-only store: %v", name, err)
		}
		if err := r.Compact(ctx); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: Compact on a read-only store: %v", name, err)
		}
		r.Close()
		if after := fileState(t, d); !maps.Equal(after, before) {
			t.Errorf("%s: the read-only open changed the directory:\nbefore %v\nafter  %v", name, before, after)
		}
	}
}

func appendBytes(dir, name string, b []byte) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		panic(err)
	}
	f.Write(b)
	f.Close()
}

// TestMissingStore: a read-only open needs an existing store, and creates
// nothing when there is none.
func TestMissingStore(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	for name, dir := range map[string]string{
		"absent directory": filepath.Join(base, "absent"),
		"empty directory":  t.TempDir(),
		"only a LOCK": func() string {
			d := t.TempDir()
			os.WriteFile(filepath.Join(d, lockName), nil, 0o644)
			return d
		}(),
	} {
		before := fileState(t, dir)
		_, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
		if !errors.Is(err, ErrNoStore) || !errors.Is(err, retrieval.ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNoStore (ErrNotFound)", name, err)
		}
		if after := fileState(t, dir); !maps.Equal(after, before) {
			t.Errorf("%s: the read-only open changed the directory", name)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "absent")); !os.IsNotExist(err) {
		t.Errorf("the read-only open created the directory: %v", err)
	}
}

// TestFilesDisagree: a store whose files do not add up fails to open; it
// is never opened as empty, or as less than it holds.
func TestFilesDisagree(t *testing.T) {
	ctx := context.Background()
	// A store with a snapshot (generation 1) and records after it.
	withSnap, _ := bigLog(t, 3)
	s := mustOpen(t, Options{Dir: withSnap})
	s.Compact(ctx)
	s.Upsert(ctx, testChunks("after", 2))
	s.Close()
	oldSnapDir := copyDir(t, withSnap)
	s = mustOpen(t, Options{Dir: withSnap})
	s.Compact(ctx)
	s.Upsert(ctx, testChunks("later", 2))
	s.Close()
	// A store with a log only (generation 0).
	logOnly, _ := bigLog(t, 3)

	rm := func(name string) func(d string) {
		return func(d string) { os.Remove(filepath.Join(d, name)) }
	}
	cases := []struct {
		name  string
		dir   string
		setup func(d string)
	}{
		{"log deleted beside a snapshot", withSnap, rm(walName)},
		{"log deleted, no snapshot", logOnly, rm(walName)},
		{"snapshot deleted", withSnap, rm(snapName)},
		{"manifest deleted", withSnap, rm(manifestName)},
		{"manifest deleted, no snapshot", logOnly, rm(manifestName)},
		{"older snapshot restored", withSnap, func(d string) {
			b, _ := os.ReadFile(filepath.Join(oldSnapDir, snapName))
			os.WriteFile(filepath.Join(d, snapName), b, 0o644)
		}},
		{"older log restored", withSnap, func(d string) {
			b, _ := os.ReadFile(filepath.Join(oldSnapDir, walName))
			os.WriteFile(filepath.Join(d, walName), b, 0o644)
		}},
		{"log of a newer generation", oldSnapDir, func(d string) {
			b, _ := os.ReadFile(filepath.Join(withSnap, walName))
			os.WriteFile(filepath.Join(d, walName), b, 0o644)
		}},
		{"manifest damaged", logOnly, func(d string) {
			b, _ := os.ReadFile(filepath.Join(d, manifestName))
			b[len(b)-1] ^= 1
			os.WriteFile(filepath.Join(d, manifestName), b, 0o644)
		}},
	}
	for _, tc := range cases {
		for _, ro := range []bool{true, false} {
			d := copyDir(t, tc.dir)
			tc.setup(d)
			before := fileState(t, d)
			s, err := Open(ctx, Options{Dir: d, ReadOnly: ro})
			if !errors.Is(err, retrieval.ErrCorrupt) {
				n := -1
				if s != nil {
					n = s.Len()
					s.Close()
				}
				t.Errorf("%s (read-only %v): Open = %d chunks, %v; want ErrCorrupt", tc.name, ro, n, err)
				continue
			}
			if after := fileState(t, d); !maps.Equal(before, after) {
				t.Errorf("%s (read-only %v): the failed open changed the directory", tc.name, ro)
			}
		}
	}
}

// TestReplaceDocumentIsOneRecord: a crash at any byte of a replacement
// leaves the old version or the new one, never the document missing or
// half replaced.
func TestReplaceDocumentIsOneRecord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1})
	if err := s.Upsert(ctx, docChunks("d", 4)); err != nil { // 5 chunks
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, docChunks("other", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, _ := os.Stat(filepath.Join(dir, walName))
	from := st.Size()
	s = mustOpen(t, Options{Dir: dir, CompactBytes: -1})
	if err := s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, "d", docChunks("d", 6)); err != nil { // 2 chunks
		t.Fatal(err)
	}
	s.Close()
	full, _ := os.ReadFile(filepath.Join(dir, walName))
	for cut := from; cut <= int64(len(full)); cut++ {
		d := copyDir(t, dir, lockName) // a crash leaves no clean-close note
		os.WriteFile(filepath.Join(d, walName), full[:cut], 0o644)
		s, err := Open(ctx, Options{Dir: d, NoSync: true})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		v, err := docVersions(s)
		s.Close()
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		want := 4
		if cut == int64(len(full)) {
			want = 6
		}
		if v["d"] != want || v["other"] != 1 {
			t.Fatalf("cut at %d of %d: versions %v, want d at %d", cut, len(full), v, want)
		}
	}
}

// TestReadOnlyBesideAWriter: a reader needs no lock, sees what the writer
// committed, and catches up with Refresh, across compactions.
func TestReadOnlyBesideAWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := mustOpen(t, Options{Dir: dir, NoSync: true, CompactBytes: -1})
	defer w.Close()
	w.Upsert(ctx, testChunks("a", 3))
	r, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open beside a writer: %v", err)
	}
	defer r.Close()
	if r.Len() != 3 {
		t.Fatalf("reader sees %d chunks, want 3", r.Len())
	}
	w.Upsert(ctx, testChunks("b", 2))
	w.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, "a", testChunks("a", 1))
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(r), dump(w); got != want {
		t.Errorf("after Refresh the reader differs from the writer:\n%s\n---\n%s", got, want)
	}
	if err := w.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	w.Upsert(ctx, testChunks("c", 4))
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(r), dump(w); got != want {
		t.Errorf("after a compaction and Refresh the reader differs from the writer")
	}
	if err := r.Refresh(ctx); err != nil { // nothing new
		t.Fatal(err)
	}
	// A second writer is still refused.
	if _, err := Open(ctx, Options{Dir: dir}); !errors.Is(err, ErrLocked) {
		t.Errorf("second writer: %v, want ErrLocked", err)
	}
}

// TestConcurrentReaders: while a writer replaces multi-chunk documents
// (compacting often), readers opened at any moment, and a long-lived one
// that refreshes, only ever see whole documents.
func TestConcurrentReaders(t *testing.T) { concurrentReaders(t, releaseStep) }

// TestReadersOfReleasedFiles is TestConcurrentReaders with the files a
// compaction replaces freed 256 bytes at a time (releaseFile), so that
// readers that opened them before they were replaced read them while
// they shrink.
func TestReadersOfReleasedFiles(t *testing.T) { concurrentReaders(t, 256) }

func concurrentReaders(t *testing.T, step int64) {
	ctx := context.Background()
	dir := t.TempDir()
	w := mustOpen(t, Options{Dir: dir, NoSync: true, CompactBytes: 16 << 10})
	defer w.Close()
	w.disk.releaseStep = step // before any write, so before any compaction
	docs := []string{"d0", "d1", "d2", "d3"}
	for _, d := range docs {
		w.Upsert(ctx, docChunks(d, 0))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for v := 1; !stop.Load(); v++ {
			d := docs[v%len(docs)]
			if err := w.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, d, docChunks(d, v)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	check := func(who string, s *Store) {
		v, err := docVersions(s)
		if err != nil {
			t.Errorf("%s: %v", who, err)
		} else if len(v) != len(docs) {
			t.Errorf("%s: %d documents, want %d: %v", who, len(v), len(docs), v)
		}
	}
	long, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	var opens, refreshes int
	deadline := time.Now().Add(700 * time.Millisecond)
	for time.Now().Before(deadline) && !t.Failed() {
		r, err := Open(ctx, Options{Dir: dir, ReadOnly: true})
		if err != nil {
			t.Errorf("open %d: %v", opens, err)
			break
		}
		check(fmt.Sprintf("open %d", opens), r)
		r.Close()
		opens++
		if err := long.Refresh(ctx); err != nil {
			t.Errorf("refresh %d: %v", refreshes, err)
			break
		}
		check(fmt.Sprintf("refresh %d", refreshes), long)
		refreshes++
	}
	stop.Store(true)
	wg.Wait()
	if err := long.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(long), dump(w); got != want {
		t.Error("after the writer stopped, a Refresh does not give the writer's state")
	}
	t.Logf("%d read-only opens and %d refreshes beside the writer", opens, refreshes)
}
