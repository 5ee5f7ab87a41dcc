package memstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// Fuzzers of the decoders. Their seeds run as unit tests; to fuzz:
//
//	go test -fuzz FuzzReplayLog -fuzztime 60s ./retrieval/memstore/
//	go test -fuzz FuzzSnapshot -fuzztime 60s ./retrieval/memstore/
//
// Random bytes rarely pass a checksum, so with fix set the fuzzers first
// recompute every checksum they can find, which lets the mutations reach
// the record and chunk decoders behind them.

// fuzzLog returns the bytes of a log holding recs as records 1, 2, ...
func fuzzLog(recs ...[]byte) []byte {
	b := encodeLogHeader(0, 0)
	for i, p := range recs {
		b = appendFrame(b, uint64(i+1), p)
	}
	return b
}

// fixLog recomputes the checksums of the header and of every record whose
// length fits.
func fixLog(b []byte) {
	if len(b) < walHeaderLen {
		return
	}
	binary.LittleEndian.PutUint32(b[walHeaderLen-4:], crc(b[:walHeaderLen-4]))
	for off := walHeaderLen; off+recHeaderLen <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n == 0 || off+recHeaderLen+n > len(b) {
			return
		}
		binary.LittleEndian.PutUint32(b[off+4:], crc(b[off:off+4], b[off+8:off+16], b[off+16:off+16+n]))
		off += recHeaderLen + n
	}
}

func FuzzReplayLog(f *testing.F) {
	f.Add(fuzzLog(encodeUpsert(testChunks("a", 2)), encodeDelete("t", "a"), encodeReplace("t", "b", testChunks("b", 2))), false)
	f.Add(fuzzLog(encodeUpsert(testChunks("a", 3)), encodeReplace("t", "a", nil)), true)
	f.Add(fuzzLog(encodeUpsert([]retrieval.Chunk{{ID: "z", Vector: []float32{0, 0}}})), true)
	f.Add(fuzzLog(encodeUpsert([]retrieval.Chunk{{ID: "n", Vector: []float32{float32(math.NaN())}}})), true)
	f.Add(fuzzLog(encodeReplace("t", "d", docChunks("x", 3))), true)
	f.Add(append(fuzzLog(encodeUpsert(testChunks("a", 1))), 7, 0, 0, 0, 1), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			fixLog(data)
		}
		r := bytes.NewReader(data)
		h, err := readLogHeader(r)
		if err != nil {
			return
		}
		s := newStore(Options{})
		var ops []logOp
		end, last, dmg, err := scanLog(context.Background(), r, h.version, h.len, int64(len(data)), h.base, func(seq uint64, p []byte, _ int64) error {
			op, err := decodeOp(p)
			if err == nil {
				err = s.applyOp(op)
			}
			if err == nil {
				ops = append(ops, op)
			}
			return err
		})
		if err != nil {
			return // a record that passed its checksum but is invalid: ErrCorrupt
		}
		if end > int64(len(data)) || (dmg == nil && end != int64(len(data))) || (dmg != nil && dmg.off != end) {
			t.Fatalf("scan ended at %d of %d with damage %+v", end, len(data), dmg)
		}
		if h.version == formatVersion && last != h.base+uint64(len(ops)) {
			t.Fatalf("last sequence %d after %d records from %d", last, len(ops), h.base)
		}
		// Round trip: the records re-encoded replay to the same state.
		var again [][]byte
		for _, op := range ops {
			again = append(again, op.encode())
		}
		b := fuzzLog(again...)
		s2 := newStore(Options{})
		_, _, dmg2, err := scanLog(context.Background(), bytes.NewReader(b), formatVersion, walHeaderLen, int64(len(b)), 0, func(_ uint64, p []byte, _ int64) error {
			op, err := decodeOp(p)
			if err == nil {
				err = s2.applyOp(op)
			}
			return err
		})
		if err != nil || dmg2 != nil {
			t.Fatalf("re-encoded log: %v %+v", err, dmg2)
		}
		if dump(s) != dump(s2) {
			t.Fatal("re-encoded log replays to another state")
		}
	})
}

// fuzzSnapshot returns the bytes of a format-2 snapshot of chunks.
func fuzzSnapshot(t testing.TB, chunks []retrieval.Chunk) []byte {
	s := newStore(Options{})
	if len(chunks) > 0 {
		s.applyUpsert(chunks)
	}
	p := filepath.Join(t.TempDir(), snapName)
	if _, err := writeSnapshot(context.Background(), p, 3, 9, s.dim, uint64(s.nLive), s, nil, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixSnapshot recomputes the header checksum, every frame's checksum
// that fits, and the closing checksum.
func fixSnapshot(b []byte) {
	if len(b) < snapHeaderLen+4 {
		return
	}
	binary.LittleEndian.PutUint32(b[snapHeaderLen-4:], crc(b[:snapHeaderLen-4]))
	end := len(b) - 4
	for off := snapHeaderLen; off+frameLen <= end; {
		n64 := uint64(binary.LittleEndian.Uint32(b[off:])) // no int(uint32): negative on 32-bit
		if n64 == 0 || n64 > uint64(end-off-frameLen) {
			break
		}
		n := int(n64)
		binary.LittleEndian.PutUint32(b[off+4:], crc(b[off+frameLen:off+frameLen+n]))
		off += frameLen + n
	}
	binary.LittleEndian.PutUint32(b[end:], crc(b[:end]))
}

func FuzzSnapshot(f *testing.F) {
	f.Add(fuzzSnapshot(f, testChunks("a", 3)), false)
	f.Add(fuzzSnapshot(f, nil), false)
	f.Add(fuzzSnapshot(f, docChunks("d", 4)), true)
	f.Add(fuzzSnapshot(f, []retrieval.Chunk{{ID: "x", Meta: map[string]string{"k": "v"}, Vector: []float32{1}}}), true)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			fixSnapshot(data)
		}
		r := bytes.NewReader(data)
		size := int64(len(data))
		// Salvage never panics, whatever the bytes.
		h, herr := readSnapHeader(r)
		var hp *snapHeader
		if herr == nil {
			hp = &h
		}
		found, _, err := salvageSnapshot(context.Background(), r, size, hp, func(retrieval.Chunk) {})
		if err != nil {
			t.Fatal(err)
		}
		if herr != nil || h.dim == 0 && h.count > 0 {
			return
		}
		s := newStore(Options{})
		if h.dim > 0 {
			s.setDim(h.dim)
		}
		err = readSnapshot(context.Background(), r, size, h, func(cs []retrieval.Chunk) error {
			if err := s.checkLoaded(cs); err != nil {
				return &snapDamage{-1, 0, err.Error()}
			}
			s.applyUpsert(cs)
			return nil
		})
		if err != nil {
			return
		}
		if h.version == formatVersion && found != h.count {
			t.Fatalf("a snapshot that loads whole salvages %d of its %d chunks", found, h.count)
		}
		// Round trip: written again, it loads to the same state.
		again := fuzzSnapshot(t, nil)
		if s.nLive > 0 {
			p := filepath.Join(t.TempDir(), snapName)
			if _, err := writeSnapshot(context.Background(), p, h.gen, h.seq, s.dim, uint64(s.nLive), s, nil, false); err != nil {
				t.Fatal(err)
			}
			again, _ = os.ReadFile(p)
		}
		h2, err := readSnapHeader(bytes.NewReader(again))
		if err != nil {
			t.Fatal(err)
		}
		s2 := newStore(Options{})
		if h2.dim > 0 {
			s2.setDim(h2.dim)
		}
		err = readSnapshot(context.Background(), bytes.NewReader(again), int64(len(again)), h2, func(cs []retrieval.Chunk) error {
			s2.applyUpsert(cs)
			return nil
		})
		if err != nil {
			t.Fatalf("the snapshot written again does not load: %v", err)
		}
		if dump(s) != dump(s2) {
			t.Fatal("the snapshot written again loads to another state")
		}
	})
}
