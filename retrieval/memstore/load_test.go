package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// loadChunks returns n random chunks whose keys, tenants, sources and
// documents repeat, in runs and not, within and across batches.
func loadChunks(r *rand.Rand, n int) []retrieval.Chunk {
	cs := make([]retrieval.Chunk, n)
	for i := range cs {
		c := &cs[i]
		c.Tenant = []string{"", "t1", "t2"}[min(r.IntN(6), 2)]
		c.ID = "c" + strconv.Itoa(r.IntN(n))
		c.DocID = "d" + strconv.Itoa(i/4+r.IntN(2))
		c.Source = []string{"s", "s", "u"}[r.IntN(3)]
		c.ContentType = retrieval.ContentText
		c.Title = []string{"", "a title"}[r.IntN(2)]
		c.Text = fmt.Sprintf("word%d word%d common", r.IntN(50), r.IntN(50))
		c.Position = r.IntN(9)
		if r.IntN(3) == 0 {
			c.Meta = map[string]string{"k": strconv.Itoa(r.IntN(4)), "z": "v"}
		}
		c.Vector = []float32{1, float32(r.IntN(5)), 0.5}
	}
	return cs
}

// A load's apply (which inserts a key before looking for it, keeps the
// decoded chunks as they are and caches the posting lists of a batch)
// leaves the state a writer's apply leaves, duplicated keys and freed ids
// included.
func TestApplyLoadedMatchesUpsert(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 9))
		cs := loadChunks(r, 3000)
		a, b := newStore(Options{}), newStore(Options{})
		for i := 0; i < len(cs); i += 500 {
			batch := cs[i : i+500]
			a.applyUpsert(batch)
			b.applyLoaded(slices.Clone(batch))
			if i == 1000 {
				for _, doc := range []string{"d3", "d100", "d250"} {
					a.applyDelete("t1", doc)
					b.applyDelete("t1", doc)
					a.applyDelete("", doc)
					b.applyDelete("", doc)
				}
			}
		}
		if da, db := dump(a), dump(b); da != db {
			t.Fatalf("seed %d: the states differ", seed)
		}
		if !maps.Equal(maps.Collect(a.byKey.all(a.recs)), maps.Collect(b.byKey.all(b.recs))) || !slices.Equal(a.tenantOf, b.tenantOf) || !slices.Equal(a.free, b.free) || a.nLive != b.nLive {
			t.Fatalf("seed %d: ids differ", seed)
		}
		for name, pair := range map[string][2]any{"tenant": {a.byTenant, b.byTenant}, "source": {a.bySource, b.bySource}, "doc": {a.byDoc, b.byDoc}} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Fatalf("seed %d: the %s posting lists differ", seed, name)
			}
		}
		q := a.lex.Search("common word7", 50, nil)
		if len(q) == 0 || !slices.Equal(q, b.lex.Search("common word7", 50, nil)) {
			t.Fatalf("seed %d: keyword results differ", seed)
		}
	}
}

// A load decodes a chunk as any read does, into strings of its own: the
// payload it came from is reused for the next one.
func TestLoadDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ld := &loadDecoder{}
	skip := &loadDecoder{skipVec: true}
	var kept, keptSkip []retrieval.Chunk
	var want []retrieval.Chunk
	buf := make([]byte, 0, 1<<12)
	for _, c := range loadChunks(r, 200) {
		buf = appendChunk(buf[:0], &c)
		w, err := decodeChunk(buf)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
		got, err := decodeChunkInto(buf, ld)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := decodeChunkInto(buf, skip)
		if err != nil {
			t.Fatal(err)
		}
		kept, keptSkip = append(kept, got), append(keptSkip, g2)
		clear(buf[:cap(buf)]) // what a reused payload does to views
	}
	for i := range want {
		if !reflect.DeepEqual(kept[i], want[i]) {
			t.Fatalf("chunk %d: %+v, want %+v", i, kept[i], want[i])
		}
		w := want[i]
		g := keptSkip[i]
		if len(g.Vector) != len(w.Vector) || g.Vector[1] != 0 {
			t.Fatalf("chunk %d: skipped vector %v, want %d zeros", i, g.Vector, len(w.Vector))
		}
		g.Vector, w.Vector = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("chunk %d without its vector: %+v, want %+v", i, g, w)
		}
	}
}

// A load, which checks the frames only when something fails, reports the
// damage of a snapshot as the read that checks every frame does: the same
// offset, extent and reason, for flipped bits, cuts, and frames whose
// checksums were made to match again (so that their contents fail).
func TestLoadSnapshotReportsAsRead(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	cs := loadChunks(r, 2500)
	for i := range cs {
		cs[i].ID = "c" + strconv.Itoa(i)
	}
	good := fuzzSnapshot(t, cs)
	read := func(b []byte, lazy bool) error {
		h, err := readSnapHeader(bytes.NewReader(b))
		if err != nil {
			return err
		}
		s := newStore(Options{})
		fn := func(cs []retrieval.Chunk) error {
			if err := s.checkLoaded(cs); err != nil {
				return &snapDamage{-1, 0, err.Error()}
			}
			return nil
		}
		if lazy {
			return loadSnapshot(context.Background(), bytes.NewReader(b), int64(len(b)), h, &loadDecoder{}, fn)
		}
		return readSnapshot(context.Background(), bytes.NewReader(b), int64(len(b)), h, fn)
	}
	if err := read(good, true); err != nil {
		t.Fatal(err)
	}
	check := func(what string, b []byte) error {
		t.Helper()
		want, got := read(b, false), read(b, true)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: a load reports %v, a read %v", what, got, want)
		}
		var g, w *snapDamage
		if errors.As(got, &g) != errors.As(want, &w) || (g != nil && *g != *w) {
			t.Fatalf("%s: a load reports %+v, a read %+v", what, g, w)
		}
		return want
	}
	damaged := 0
	for range 600 {
		b := slices.Clone(good)
		at := snapHeaderLen + r.IntN(len(b)-snapHeaderLen)
		b[at] ^= 1 << r.IntN(8)
		switch r.IntN(3) {
		case 1:
			fixSnapshot(b) // the contents fail, not a checksum
		case 2:
			// Contents that fail in a late batch, and a checksum that
			// fails in an early one.
			fixSnapshot(b)
			b[snapHeaderLen+r.IntN(len(b)/3)] ^= 1 << r.IntN(8)
		}
		if check(fmt.Sprintf("byte %d", at), b) != nil {
			damaged++
		}
	}
	for range 100 {
		n := r.IntN(len(good))
		check(fmt.Sprintf("cut at %d", n), good[:n])
	}
	if damaged < 400 {
		t.Fatalf("only %d of 600 damaged snapshots were refused", damaged)
	}
}

// A reopen replays a log of upserts, replacements and deletions after the
// snapshot into the state that wrote them, whether it adopts the index
// files (and leaves the log's vectors undecoded) or builds the indexes.
func TestReopenReplaysLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, Options{Dir: dir, CompactBytes: -1})
	for d := range 40 {
		if err := s.Upsert(ctx, docChunks("d"+strconv.Itoa(d), d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for d := range 40 {
		doc := "d" + strconv.Itoa(d)
		var err error
		switch d % 3 {
		case 0:
			err = s.ReplaceDocument(ctx, retrieval.Scope{Tenant: "t"}, doc, docChunks(doc, d+7))
		case 1:
			err = s.DeleteDocument(ctx, retrieval.Scope{Tenant: "t"}, doc)
		default:
			err = s.Upsert(ctx, docChunks(doc, d+1))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := dump(s)
	q := retrieval.Request{Scope: retrieval.Scope{Tenant: "t"}, Text: "common version8", Vector: vec(8, 3), K: 20}
	wantHits, err := s.SearchHybrid(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, adopt := range []bool{true, false} {
		if !adopt {
			os.Remove(filepath.Join(dir, denseName))
			os.Remove(filepath.Join(dir, sparseName))
		}
		s := mustOpen(t, Options{Dir: dir, ReadOnly: true})
		if s.denseOnDisk != adopt {
			t.Fatalf("adopt %v: the dense index file was adopted: %v", adopt, s.denseOnDisk)
		}
		if got := dump(s); got != want {
			t.Fatalf("adopt %v: the reopened state differs:\n%s\nwant\n%s", adopt, got, want)
		}
		hits, err := s.SearchHybrid(ctx, q)
		if err != nil || !reflect.DeepEqual(hits, wantHits) {
			t.Fatalf("adopt %v: hits %v (%v), want %v", adopt, hits, err, wantHits)
		}
		s.Close()
	}
}

// A snapshot cut short under a load that read its size before is an
// error, not a crash: through a mapping, the pages past the new end fault.
func TestLoadSnapshotCutUnderIt(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	cs := loadChunks(r, 3000)
	for i := range cs {
		cs[i].ID = "c" + strconv.Itoa(i)
	}
	b := fuzzSnapshot(t, cs)
	p := filepath.Join(t.TempDir(), snapName)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := readSnapHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	fn := func(cs []retrieval.Chunk) error { n += len(cs); return nil }
	if err := loadSnapshot(context.Background(), f, int64(len(b)), h, &loadDecoder{}, fn); err != nil || n != len(cs) {
		t.Fatalf("the whole snapshot: %d chunks, %v", n, err)
	}
	// At a page boundary: the next byte read is on a page past the end.
	if err := os.Truncate(p, int64(len(b)/3/os.Getpagesize()*os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	n = 0
	if err := loadSnapshot(context.Background(), f, int64(len(b)), h, &loadDecoder{}, fn); err == nil {
		t.Fatalf("a snapshot cut to a third loaded %d chunks without an error", n)
	} else {
		t.Logf("cut short: %v after %d chunks", err, n)
	}
}
