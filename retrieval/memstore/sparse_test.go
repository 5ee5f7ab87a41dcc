package memstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/bm25"
)

// lexWords is the vocabulary of sparseChunks' texts, Zipf-distributed so
// that queries meet long and short posting lists.
var lexWords = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega " +
	"red green blue cyan magenta yellow black white grey brown orange violet one two three four five six seven eight nine ten")

func lexText2(rng *rand.Rand, z *rand.Zipf, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = lexWords[z.Uint64()]
	}
	return strings.Join(w, " ")
}

// sparseChunks is denseChunks with texts (and some titles) of random
// words, so that BM25 ranks them apart.
func sparseChunks(rng *rand.Rand, n, dim, rev int) []retrieval.Chunk {
	cs := denseChunks(rng, n, dim, rev)
	z := rand.NewZipf(rng, 1.1, 2, uint64(len(lexWords)-1))
	for i := range cs {
		cs[i].Text = lexText2(rng, z, 3+rng.IntN(25))
		if i%4 == 0 {
			cs[i].Title = lexText2(rng, z, 2)
		}
		cs[i].Source = fmt.Sprintf("s%d", i%7)
	}
	return cs
}

// sparseAnswers is what s answers a fixed set of keyword searches (each
// tenant, with and without filters), hit by hit with its score to digits
// significant digits.
func sparseAnswers(t *testing.T, s *Store, digits int) string {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	z := rand.NewZipf(rng, 1.1, 2, uint64(len(lexWords)-1))
	var sb strings.Builder
	for q := range 40 {
		req := retrieval.Request{Text: lexText2(rng, z, 1+q%4), K: 1 + q%15, Scope: retrieval.Scope{Tenant: fmt.Sprintf("t%d", q%3)}}
		switch q % 4 {
		case 1:
			req.Filter.Must = []retrieval.Condition{{Key: retrieval.KeySource, Values: []string{"s1", "s3"}}}
		case 2:
			req.Filter.Must = []retrieval.Condition{{Key: retrieval.KeyDocID, Values: []string{"d2", "d7", "d11"}}}
		}
		hs, err := s.SearchSparse(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// Ties go by internal id, which a writer and a load assign
		// differently: within a tie the hits are listed by chunk id, and
		// in a tie at the cut only the scores are (either may be cut).
		slices.SortStableFunc(hs, func(a, b retrieval.Hit) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Chunk.ID, b.Chunk.ID))
		})
		fmt.Fprintf(&sb, "%q:", req.Text)
		for _, h := range hs {
			if h.Score == hs[len(hs)-1].Score && len(hs) == req.K {
				fmt.Fprintf(&sb, " ?=%.*g", digits, h.Score)
				continue
			}
			fmt.Fprintf(&sb, " %s=%.*g", h.Chunk.ID, digits, h.Score)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// openAnswers opens dir (read-only or writable) and returns its keyword
// answers and whether it adopted sparse.idx.
func openAnswers(t *testing.T, dir string, o Options, digits int) (answers string, adopted bool) {
	t.Helper()
	withStore(t, dir, o, func(s *Store) {
		answers, adopted = sparseAnswers(t, s, digits), s.sparseOnDisk
	})
	return answers, adopted
}

// openAnswersChecked is openAnswers for a writer, after its background
// check: damage that a writer's open leaves to that check (the file's
// body checksum, read in place, and the forward lists) is found by then
// and reported by Verified, and the index built from the texts instead.
// It returns whether the file was still adopted after the check, and
// whether the check found it damaged.
func openAnswersChecked(t *testing.T, dir string, o Options, digits int) (answers string, adopted, found bool) {
	t.Helper()
	withStore(t, dir, o, func(s *Store) {
		s.waitScrub()
		done, dmg := s.Verified()
		var ce *CorruptError
		switch {
		case !done:
			t.Fatal("the background check did not finish")
		case dmg == nil:
		case errors.As(dmg, &ce) && ce.File == sparseName && ce.Rewritten:
			found = true
		default:
			t.Fatalf("Verified: %v", dmg)
		}
		s.mu.RLock()
		adopted = s.sparseOnDisk
		s.mu.RUnlock()
		answers = sparseAnswers(t, s, digits)
	})
	return answers, adopted, found
}

// withStore opens dir with o, runs f on the store and closes it.
func withStore(t *testing.T, dir string, o Options, f func(*Store)) {
	t.Helper()
	o.Dir = dir
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	f(s)
}

// churnedStore writes to dir a store whose internal ids have been reused
// (deletes, a replacement, more chunks), so that a writer's ids differ
// from a load's, and returns it open.
func churnedStore(t *testing.T, dir string, seed uint64) *Store {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 2))
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Upsert(ctx, sparseChunks(rng, 1500, 16, 0)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d3", "d10", "d17"} {
		if err := s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t0"}, d); err != nil {
			t.Fatal(err)
		}
	}
	repl := sparseChunks(rng, 9, 16, 1)
	for i := range repl {
		repl[i].ID, repl[i].Tenant, repl[i].DocID = fmt.Sprintf("d5-new%d", i), "t1", "d5"
	}
	if err := s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t1"}, "d5", repl); err != nil {
		t.Fatal(err)
	}
	// A snapshot of the store with holes: a load numbers its chunks
	// afresh, the writer then fills its holes with the next ones.
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	more := sparseChunks(rng, 300, 16, 2)
	for i := range more {
		more[i].ID = fmt.Sprintf("m%d", i)
	}
	if err := s.Upsert(ctx, more); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSparseIndexSavedAndAdopted(t *testing.T) {
	dir := t.TempDir()
	s := churnedStore(t, dir, 1)
	// The writer's own answers, to the bit: the adopted index is its.
	want := sparseAnswers(t, s, 17)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sparseName)); err != nil {
		t.Fatalf("Close saved no keyword index: %v", err)
	}
	r, err := Open(context.Background(), Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	checkLexicon(t, r, "adopted")
	r.Close()
	for _, ro := range []bool{true, false} {
		got, adopted := openAnswers(t, dir, Options{ReadOnly: ro}, 17)
		if !adopted {
			t.Fatalf("read-only %v: the saved keyword index was not adopted", ro)
		}
		if got != want {
			t.Fatalf("read-only %v: the adopted keyword index answers otherwise than the writer:\n%s\nwant\n%s", ro, got, want)
		}
	}
	// A store built from the records (in another order, so scores may
	// differ in their last bits) ranks alike.
	re, adopted := openAnswers(t, copyDir(t, dir, sparseName), Options{ReadOnly: true}, 12)
	if adopted {
		t.Fatal("a store without sparse.idx claims to have adopted one")
	}
	if got, _ := openAnswers(t, dir, Options{ReadOnly: true}, 12); got != re {
		t.Fatalf("the adopted keyword index answers otherwise than one rebuilt:\n%s\nwant\n%s", got, re)
	}

	// The first write after an open drops it; the next Close writes it
	// again, and it holds that write.
	ctx := context.Background()
	w, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if !w.sparseOnDisk {
		t.Fatal("not adopted by a writer")
	}
	rng := rand.New(rand.NewPCG(4, 4))
	if err := w.Upsert(ctx, sparseChunks(rng, 50, 16, 3)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sparseName, denseName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("the first write after the open left %s in place", name)
		}
	}
	want = sparseAnswers(t, w, 17)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, adopted := openAnswers(t, dir, Options{}, 17); !adopted || got != want {
		t.Fatalf("after a write and a Close: adopted %v, same answers %v", adopted, got == want)
	}
}

// A keyword index file that does not index the store, goes with another
// key table, was written with other parameters, or is damaged, is
// ignored: the open builds the index from the records and answers as a
// store without the file.
func TestSparseIndexStaleOrDamagedIsIgnored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := churnedStore(t, dir, 3).Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sparseName)
	read := func() []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// check reports whether the writer's background check found damage.
	check := func(name string, o Options, wantAdopted bool) (foundAfterOpen bool) {
		t.Helper()
		want, _ := openAnswers(t, copyDir(t, dir, sparseName), Options{ReadOnly: true, BM25: o.BM25}, 12)
		for _, ro := range []bool{true, false} {
			before := read()
			dense, err := os.ReadFile(filepath.Join(dir, denseName))
			if err != nil {
				t.Fatal(err)
			}
			o.ReadOnly = ro
			var got string
			var adopted, found bool
			if ro {
				got, adopted = openAnswers(t, dir, o, 12)
			} else {
				got, adopted, found = openAnswersChecked(t, dir, o, 12)
			}
			if adopted != wantAdopted || found && wantAdopted {
				t.Fatalf("%s (read-only %v): adopted %v (found damaged by the check after the open: %v), want %v", name, ro, adopted, found, wantAdopted)
			}
			if got != want {
				t.Fatalf("%s (read-only %v): answers otherwise than a store without the file:\n%s\nwant\n%s", name, ro, got, want)
			}
			foundAfterOpen = foundAfterOpen || found
			if !ro {
				// The writable open's Close may have written both files
				// again; the next case starts from these ones.
				put(before)
				if err := os.WriteFile(filepath.Join(dir, denseName), dense, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return foundAfterOpen
	}
	first := read()
	check("intact", Options{}, true)

	// Other parameters: the file is ignored, the index built with them.
	check("other k1", Options{BM25: bm25.Params{K1: 1.6}}, false)

	// Another writer's key table at the same state: dense.idx written
	// again by a writer whose ids are a load's (the keyword file was
	// missing), then the old keyword file put back, as a crash between
	// the two renames would leave it if the old one had been valid.
	os.Remove(path)
	w, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.sparseOnDisk || !w.denseOnDisk {
		t.Fatalf("without sparse.idx: adopted dense %v, sparse %v", w.denseOnDisk, w.sparseOnDisk)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	second := read()
	put(first)
	check("another key table", Options{}, false)
	put(second)
	check("rewritten", Options{}, true)

	// More records after the file was written (a later writer that
	// crashed before its Close): stale.
	w, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Upsert(ctx, sparseChunks(rand.New(rand.NewPCG(5, 5)), 20, 16, 4)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good := read()
	put(second)
	check("stale, more records", Options{}, false)
	put(good)
	check("intact again", Options{}, true)

	// Damage: cuts and flipped bytes in the head and the index.
	for _, off := range []int{0, 9, 20, 30, sparseHeadLen + 3, sparseHeadLen + 40, len(good) / 3, len(good) / 2, len(good) - 5} {
		b := append([]byte(nil), good...)
		b[off] ^= 0x10
		put(b)
		found := check(fmt.Sprintf("flipped at %d", off), Options{}, false)
		if off == len(good)-5 && !found {
			// In the last forward list, which the open does not read: a
			// writer reads the file in place and leaves its checksum to
			// the check after the open.
			t.Errorf("flipped at %d: the writer's check after the open did not report it", off)
		}
		put(good[:off])
		check(fmt.Sprintf("cut at %d", off), Options{}, false)
	}
	put(append(append([]byte(nil), good...), 1))
	check("trailing byte", Options{}, false)

	// A leftover temporary file of a Close that crashed is removed.
	put(good)
	if err := os.WriteFile(path+".tmp", good[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	check("beside a leftover temporary file", Options{}, true)
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Fatal("a writable open left sparse.idx.tmp in place")
	}
}

// A compaction after an open drops the file (a new snapshot generation),
// and a store whose dense.idx is missing or stale does not adopt its
// keyword file either, whose ids it could not rename.
func TestSparseIndexFollowsDenseIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := churnedStore(t, dir, 6).Close(); err != nil {
		t.Fatal(err)
	}
	want, _ := openAnswers(t, copyDir(t, dir, sparseName), Options{ReadOnly: true}, 12)
	got, adopted := openAnswers(t, copyDir(t, dir, denseName), Options{ReadOnly: true}, 12)
	if adopted || got != want {
		t.Fatalf("without dense.idx: adopted %v, same answers %v", adopted, got == want)
	}
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sparseName, denseName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("a compaction after the open left %s in place", name)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got, adopted := openAnswers(t, dir, Options{ReadOnly: true}, 12); !adopted || got != want {
		t.Fatalf("after a compaction and a Close: adopted %v, same answers %v", adopted, got == want)
	}
}

// checkLexicon checks that the keyword index holds exactly the stored
// chunks, each ranked for its own text with the score an index built
// afresh from the records gives it: whether the open rebuilt the index or
// adopted sparse.idx, and whatever the order its documents were added in.
func checkLexicon(t *testing.T, s *Store, when string) {
	t.Helper()
	if s.lex.Len() != s.byKey.len() {
		t.Fatalf("%s: keyword index holds %d documents for %d chunks", when, s.lex.Len(), s.byKey.len())
	}
	fresh := bm25.New(s.opts.BM25)
	for iid := range s.recs {
		if r := &s.recs[iid]; r.live {
			fresh.Add(uint32(iid), lexText(&r.Chunk))
		}
	}
	for k, iid := range s.byKey.all(s.recs) {
		text := lexText(&s.recs[iid].Chunk)
		got, want := s.lex.SearchAmong(text, 1, []uint32{iid}), fresh.SearchAmong(text, 1, []uint32{iid})
		if len(got) != len(want) || len(got) == 1 && (got[0].ID != iid || math.Abs(got[0].Score-want[0].Score) > 1e-9*want[0].Score) {
			t.Fatalf("%s: chunk %s ranks %v for its own text, want %v", when, k.id, got, want)
		}
	}
}

// A keyword index file that passes its checksums but whose forward lists
// contradict its postings (as a bug or a forger would write it) is
// adopted by a writer, which checks it in the background: the check
// finds it, the index is built again from the texts, and the file is
// written anew by Close.
func TestSparseIndexCheckedAfterOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := churnedStore(t, dir, 4).Close(); err != nil {
		t.Fatal(err)
	}
	want, _ := openAnswers(t, copyDir(t, dir, sparseName), Options{ReadOnly: true}, 12)
	path := filepath.Join(dir, sparseName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The index ends with the last slot's forward list, whose last byte
	// is a term frequency, then the checksum of the index (which starts
	// after the file's head).
	b := slices.Clone(good)
	if b[len(b)-5] >= 0x7f {
		t.Fatalf("last frequency byte %#x", b[len(b)-5])
	}
	b[len(b)-5]++
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32Update(0, b[sparseHeadLen:len(b)-4]))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A reader makes every check at the open: it builds the index from
	// the texts instead.
	if _, adopted := openAnswers(t, dir, Options{ReadOnly: true}, 12); adopted {
		t.Fatal("a reader adopted a keyword index that fails its checks")
	}
	// The check starts at once: held until the test has seen the open's
	// choice, as a fast check would otherwise have undone it.
	hold := make(chan struct{})
	scrubHold = func() { <-hold }
	t.Cleanup(func() { scrubHold = nil })
	s, err := Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	adopted := s.sparseOnDisk
	s.mu.RUnlock()
	close(hold)
	if !adopted {
		s.waitScrub()
		t.Fatal("the writer did not adopt the file before checking it")
	}
	s.waitScrub()
	done, dmg := s.Verified()
	var ce *CorruptError
	if !done || !errors.As(dmg, &ce) || ce.File != sparseName || !ce.Rewritten || !errors.Is(dmg, retrieval.ErrCorrupt) {
		t.Fatalf("Verified: %v, %v", done, dmg)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("sparse.idx was not dropped")
	}
	if got := sparseAnswers(t, s, 12); got != want {
		t.Fatalf("after the rebuild the store answers:\n%s\nwant\n%s", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.waitScrub()
	if done, dmg := s.Verified(); !done || dmg != nil || !s.sparseOnDisk {
		t.Fatalf("reopened: verified %v, %v; adopted %v", done, dmg, s.sparseOnDisk)
	}
	if got := sparseAnswers(t, s, 12); got != want {
		t.Fatalf("reopened, the store answers:\n%s\nwant\n%s", got, want)
	}
}
