package memstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	for _, x := range c.Vector {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// reader decodes from an io.ByteReader-capable source; the first error
// sticks, so a decode can run to the end and be checked once.
type reader struct {
	r   io.Reader
	br  io.ByteReader
	err error
}

func newReader(r interface {
	io.Reader
	io.ByteReader
}) *reader {
	return &reader{r: r, br: r}
}

func (d *reader) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errShort
		}
		d.err = err
	}
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
	if d.err == nil && n > 0 {
		// One read for the whole vector: per-float reads dominated loading.
		raw := make([]byte, 4*n)
		if _, err := io.ReadFull(d.r, raw); err != nil {
			d.fail(err)
			return c
		}
		c.Vector = make([]float32, n)
		for i := range c.Vector {
			c.Vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	return c
}
