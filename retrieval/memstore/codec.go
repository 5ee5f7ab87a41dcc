package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/adaptrag/adaptrag/retrieval"
)

// On-disk encoding, shared by the log and the snapshot. All integers are
// little-endian; strings and vectors carry a uvarint length.
//
// A chunk is: ID, DocID, Tenant, Source, Title, ContentType (strings),
// Position (varint), Text (string), Meta (uvarint count, then key, value
// pairs in key order), Vector (uvarint length, then float32 bits).

// Limits that keep a corrupt length from turning into a huge allocation.
const (
	maxString = 64 << 20
	maxVector = 1 << 16
	maxMeta   = 1 << 16
)

// errShort reports a record that ends before its declared content.
var errShort = errors.New("truncated record")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendChunk(b []byte, c *retrieval.Chunk) []byte {
	for _, s := range []string{c.ID, c.DocID, c.Tenant, c.Source, c.Title, c.ContentType} {
		b = appendString(b, s)
	}
	b = binary.AppendVarint(b, int64(c.Position))
	b = appendString(b, c.Text)
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(appendString(b, k), c.Meta[k])
	}
	b = binary.AppendUvarint(b, uint64(len(c.Vector)))
	n := len(b)
	b = slices.Grow(b, 4*len(c.Vector))[:n+4*len(c.Vector)]
	for i, x := range c.Vector {
		binary.LittleEndian.PutUint32(b[n+4*i:], math.Float32bits(x))
	}
	return b
}

// chunksSize is about the encoded size of chunks, so that a record is
// built in one allocation: growing it by append copied a 1,000-chunk
// batch's 1.8 MB about ten times, most of an ingest's memory traffic.
func chunksSize(chunks []retrieval.Chunk) int {
	n := 16
	for i := range chunks {
		c := &chunks[i]
		n += 64 + len(c.ID) + len(c.DocID) + len(c.Tenant) + len(c.Source) + len(c.Title) + len(c.ContentType) + len(c.Text) + 4*len(c.Vector)
		for k, v := range c.Meta {
			n += 10 + len(k) + len(v)
		}
	}
	return n
}

// reader decodes from an io.ByteReader-capable source; the first error
// sticks, so a decode can run to the end and be checked once.
type reader struct {
	r   io.Reader
	br  io.ByteReader
	mem *byteSlice // r, when the source is in memory: read without copies
	// ld, when set, decodes for a load (see loadDecoder).
	ld  *loadDecoder
	err error
}

// loadDecoder is how a load decodes the chunks of a snapshot, which are
// many and handed in batches to the indexes, which copy what they keep.
type loadDecoder struct {
	// slab is where vectors are decoded to (appended), reused once a
	// batch is indexed instead of allocating every vector.
	slab []float32
	// skipVec leaves the vectors undecoded, for a load that adopts the
	// dense index file: a chunk's Vector is then a stand-in of the right
	// length (zeros, shared), which only checkLoaded reads, for its length.
	skipVec bool
	zeros   []float32
	// keep says the payload is never reused nor changed, and outlives the
	// chunks (the records file read whole into memory): their strings
	// stay views of it instead of being copied out.
	keep bool
	// The last tenant, source and content type seen, each its own
	// allocation: consecutive chunks nearly always repeat them, so they
	// are shared instead of copied for every chunk.
	tenant, source, ctype string
	kv                    []string // scratch: metadata pairs being decoded
	src                   byteSlice
	rd                    reader
}

// intern returns s, which may be a view of the payload, as *last when
// they are equal, else as a copy that becomes *last.
func intern(last *string, s string) string {
	if s == *last {
		return *last
	}
	*last = strings.Clone(s)
	return *last
}

// rebase makes s, a view of the payload whose first byte is at base,
// the same bytes of arena, a copy of the payload's start.
func rebase(s *string, base uintptr, arena string) {
	if len(*s) == 0 {
		return
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(*s))) - base
	*s = arena[off : off+uintptr(len(*s))]
}

func newReader(r interface {
	io.Reader
	io.ByteReader
}) *reader {
	d := &reader{r: r, br: r}
	d.mem, _ = r.(*byteSlice)
	return d
}

func (d *reader) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errShort
		}
		d.err = err
	}
}

// short fails the decode when the source is in memory and holds fewer
// than n bytes, before a corrupt length turns into a large allocation.
func (d *reader) short(n uint64) bool {
	if l, ok := d.r.(interface{ Len() int }); ok && n > uint64(l.Len()) {
		d.fail(errShort)
		return true
	}
	return false
}

// errOverflow is what binary.ReadUvarint says of an overlong varint.
var errOverflow = errors.New("binary: varint overflows a 64-bit integer")

// varintErr is the error of binary.Uvarint's or Varint's n <= 0: the
// bytes end inside the varint, or it overflows.
func varintErr(n int) error {
	if n == 0 {
		return errShort
	}
	return errOverflow
}

func (d *reader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	if d.mem != nil {
		// Straight from memory: a call through io.ByteReader per byte
		// was a good part of decoding.
		v, n := binary.Uvarint(d.mem.b)
		if n <= 0 {
			d.fail(varintErr(n))
			return 0
		}
		d.mem.b = d.mem.b[n:]
		return v
	}
	v, err := binary.ReadUvarint(d.br)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *reader) varint() int64 {
	if d.err != nil {
		return 0
	}
	if d.mem != nil {
		v, n := binary.Varint(d.mem.b)
		if n <= 0 {
			d.fail(varintErr(n))
			return 0
		}
		d.mem.b = d.mem.b[n:]
		return v
	}
	v, err := binary.ReadVarint(d.br)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *reader) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > maxString {
		d.fail(fmt.Errorf("string of %d bytes exceeds the limit", n))
		return ""
	}
	if n == 0 {
		return ""
	}
	if d.short(n) {
		return ""
	}
	if d.mem != nil {
		var s string
		if d.ld != nil {
			// A view, which chunk rebases or interns before the payload
			// is reused.
			s = unsafe.String(&d.mem.b[0], n)
		} else {
			s = string(d.mem.b[:n])
		}
		d.mem.b = d.mem.b[n:]
		return s
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return ""
	}
	return string(b)
}

func (d *reader) chunk() retrieval.Chunk {
	var c retrieval.Chunk
	// A load decoding from memory reads the strings as views of the
	// payload and copies them at the end into one allocation for the
	// chunk (arena), instead of one per string.
	views := d.ld != nil && d.mem != nil
	var start []byte
	if views {
		start = d.mem.b
	}
	for _, p := range []*string{&c.ID, &c.DocID, &c.Tenant, &c.Source, &c.Title, &c.ContentType} {
		*p = d.str()
	}
	pos := d.varint()
	if pos < math.MinInt32 || pos > math.MaxInt32 {
		d.fail(fmt.Errorf("position %d out of range", pos))
	}
	c.Position = int(pos)
	c.Text = d.str()
	n := d.uvarint()
	if n > maxMeta {
		d.fail(fmt.Errorf("%d metadata entries exceed the limit", n))
	}
	if d.err == nil && n > 0 {
		if views {
			kv := d.ld.kv[:0]
			for range n {
				kv = append(kv, d.str(), d.str())
			}
			d.ld.kv = kv
		} else {
			c.Meta = make(map[string]string, n)
			for range n {
				k := d.str()
				c.Meta[k] = d.str()
			}
		}
	}
	if views && d.err == nil && d.ld.keep {
		if len(d.ld.kv) > 0 {
			kv := d.ld.kv
			c.Meta = make(map[string]string, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				c.Meta[kv[i]] = kv[i+1]
			}
			clear(kv)
			d.ld.kv = kv[:0]
		}
	} else if views && d.err == nil {
		ld := d.ld
		c.Tenant, c.Source, c.ContentType = intern(&ld.tenant, c.Tenant), intern(&ld.source, c.Source), intern(&ld.ctype, c.ContentType)
		arena := string(start[:len(start)-len(d.mem.b)])
		base := uintptr(unsafe.Pointer(unsafe.SliceData(start)))
		for _, p := range []*string{&c.ID, &c.DocID, &c.Title, &c.Text} {
			rebase(p, base, arena)
		}
		if len(ld.kv) > 0 {
			c.Meta = make(map[string]string, len(ld.kv)/2)
			for i := 0; i < len(ld.kv); i += 2 {
				rebase(&ld.kv[i], base, arena)
				rebase(&ld.kv[i+1], base, arena)
				c.Meta[ld.kv[i]] = ld.kv[i+1]
			}
			clear(ld.kv)
			ld.kv = ld.kv[:0]
		}
	}
	n = d.uvarint()
	if n > maxVector {
		d.fail(fmt.Errorf("vector of %d dimensions exceeds the limit", n))
	}
	if d.err == nil && n > 0 && !d.short(4*n) {
		// One read for the whole vector: per-float reads dominated loading.
		var raw []byte
		if d.mem != nil {
			raw, d.mem.b = d.mem.b[:4*n], d.mem.b[4*n:]
		} else {
			raw = make([]byte, 4*n)
			if _, err := io.ReadFull(d.r, raw); err != nil {
				d.fail(err)
				return c
			}
		}
		switch ld := d.ld; {
		case ld != nil && ld.skipVec:
			if len(ld.zeros) < int(n) {
				ld.zeros = make([]float32, n)
			}
			c.Vector = ld.zeros[:n:n]
			return c
		case ld != nil:
			if cap(ld.slab)-len(ld.slab) < int(n) {
				ld.slab = make([]float32, 0, max(int(n)*1024, cap(ld.slab)))
			}
			l := len(ld.slab)
			ld.slab = ld.slab[:l+int(n)]
			c.Vector = ld.slab[l : l+int(n) : l+int(n)]
		default:
			c.Vector = make([]float32, n)
		}
		for i := range c.Vector {
			c.Vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return c
}

// logOp is a decoded log record.
type logOp struct {
	op            byte // opUpsert, opDelete, opReplace
	tenant, docID string
	chunks        []retrieval.Chunk
}

// encodeUpsert encodes an Upsert: opUpsert, a uvarint count, the chunks.
func encodeUpsert(chunks []retrieval.Chunk) []byte {
	b := append(make([]byte, 0, chunksSize(chunks)), opUpsert)
	b = binary.AppendUvarint(b, uint64(len(chunks)))
	for i := range chunks {
		b = appendChunk(b, &chunks[i])
	}
	return b
}

// encodeDelete encodes a DeleteDocument: opDelete, the tenant, the
// document id.
func encodeDelete(tenant, docID string) []byte {
	return appendString(appendString([]byte{opDelete}, tenant), docID)
}

// encodeReplace encodes a ReplaceDocument as one record: opReplace, the
// tenant, the document id, a uvarint count and the new chunks. Replaying
// it deletes the document and inserts the chunks in one step.
func encodeReplace(tenant, docID string, chunks []retrieval.Chunk) []byte {
	b := append(make([]byte, 0, chunksSize(chunks)+len(tenant)+len(docID)+16), opReplace)
	b = appendString(appendString(b, tenant), docID)
	b = binary.AppendUvarint(b, uint64(len(chunks)))
	for i := range chunks {
		b = appendChunk(b, &chunks[i])
	}
	return b
}

// decodeOp parses a log payload. It never panics on bad input.
func decodeOp(payload []byte) (logOp, error) { return decodeOpWith(payload, nil) }

// decodeOpWith is decodeOp decoding the chunks through ld (see
// loadDecoder) when not nil, for a load replaying its log. The vectors
// decoded into ld's slab are not reused: a log's records are applied one
// by one, and the slab only saves an allocation per vector.
func decodeOpWith(payload []byte, ld *loadDecoder) (logOp, error) {
	if len(payload) == 0 {
		return logOp{}, errShort
	}
	src := &byteSlice{payload[1:]}
	r := newReader(src)
	o := logOp{op: payload[0]}
	chunks := func() {
		n := r.uvarint()
		if r.err == nil && n > uint64(len(payload)) { // every chunk takes bytes
			r.fail(fmt.Errorf("%d chunks in a %d-byte record", n, len(payload)))
		}
		if r.err == nil && ld != nil {
			// Sized up front (a damaged count is capped): a load replays
			// many records, and growing each by appends doubles the
			// garbage it leaves.
			o.chunks = make([]retrieval.Chunk, 0, min(n, 4096))
		}
		// Only the chunks are decoded as views of the payload, which
		// chunk copies out before it returns.
		r.ld = ld
		for i := uint64(0); i < n && r.err == nil; i++ {
			o.chunks = append(o.chunks, r.chunk())
		}
		r.ld = nil
	}
	switch o.op {
	case opUpsert:
		chunks()
	case opDelete:
		o.tenant, o.docID = r.str(), r.str()
	case opReplace:
		o.tenant, o.docID = r.str(), r.str()
		chunks()
	default:
		return logOp{}, fmt.Errorf("unknown operation %d", o.op)
	}
	if r.err != nil {
		return logOp{}, r.err
	}
	if len(src.b) != 0 {
		return logOp{}, fmt.Errorf("%d stray bytes after the record", len(src.b))
	}
	return o, nil
}

// encode re-encodes o (tests check that decoding round-trips).
func (o logOp) encode() []byte {
	switch o.op {
	case opUpsert:
		return encodeUpsert(o.chunks)
	case opDelete:
		return encodeDelete(o.tenant, o.docID)
	}
	return encodeReplace(o.tenant, o.docID, o.chunks)
}

// byteSlice reads a payload held in memory.
type byteSlice struct{ b []byte }

func (r *byteSlice) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// Len returns the number of bytes left.
func (r *byteSlice) Len() int { return len(r.b) }

func (r *byteSlice) ReadByte() (byte, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}
