package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

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
	// slab, when set, is where vectors are decoded to (appended): a
	// loader that hands each batch to the indexes, which copy the
	// vectors, reuses it instead of allocating every vector.
	slab *[]float32
	err  error
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

func (d *reader) uvarint() uint64 {
	if d.err != nil {
		return 0
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
		s := string(d.mem.b[:n])
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
		c.Meta = make(map[string]string, n)
		for range n {
			k := d.str()
			c.Meta[k] = d.str()
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
		if d.slab != nil {
			if cap(*d.slab)-len(*d.slab) < int(n) {
				*d.slab = make([]float32, 0, max(int(n)*1024, cap(*d.slab)))
			}
			l := len(*d.slab)
			*d.slab = (*d.slab)[:l+int(n)]
			c.Vector = (*d.slab)[l : l+int(n) : l+int(n)]
		} else {
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
func decodeOp(payload []byte) (logOp, error) {
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
		for i := uint64(0); i < n && r.err == nil; i++ {
			o.chunks = append(o.chunks, r.chunk())
		}
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
