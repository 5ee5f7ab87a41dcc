package bm25

import (
	"encoding/binary"
	"io"
)

// pagedBytes is a byte string kept in pages of pageSize bytes that never
// move once full, so that appending to it never copies what it holds. The
// forward lists were one slice that append grew by a quarter at a time:
// at a million documents its 79 MB were copied into a new 99 MB array,
// whose page faults held that write 300 to 400 ms (in the store, under
// its write lock). Only the last page grows by append, up to pageSize.
type pagedBytes struct {
	pages [][]byte // pages[i] holds bytes [i·pageSize, (i+1)·pageSize)
	n     int
}

// pageSize is the length of a full page.
const pageSize = 1 << 20

// pagedOf returns b as pages that share its memory; appending to them
// never writes into b.
func pagedOf(b []byte) pagedBytes {
	p := pagedBytes{n: len(b)}
	for lo := 0; lo < len(b); lo += pageSize {
		hi := min(lo+pageSize, len(b))
		p.pages = append(p.pages, b[lo:hi:hi])
	}
	return p
}

// Len returns the number of bytes held.
func (p *pagedBytes) Len() int { return p.n }

// append adds b at the end.
func (p *pagedBytes) append(b []byte) {
	for len(b) > 0 {
		last := len(p.pages) - 1
		if last < 0 || len(p.pages[last]) == pageSize {
			p.pages = append(p.pages, nil)
			last++
		}
		k := min(len(b), pageSize-len(p.pages[last]))
		p.pages[last] = append(p.pages[last], b[:k]...)
		p.n += k
		b = b[k:]
	}
}

// slice returns bytes [lo, hi): a view of its page, or, for a range that
// crosses a page boundary, a copy assembled in *buf (valid until the next
// use of buf).
func (p *pagedBytes) slice(lo, hi int, buf *[]byte) []byte {
	if hi <= lo {
		return nil
	}
	i := lo / pageSize
	if (hi-1)/pageSize == i {
		return p.pages[i][lo-i*pageSize : hi-i*pageSize]
	}
	b := (*buf)[:0]
	for at := lo; at < hi; {
		j := at / pageSize
		end := min(hi, (j+1)*pageSize)
		b = append(b, p.pages[j][at-j*pageSize:end-j*pageSize]...)
		at = end
	}
	*buf = b
	return b
}

// writeTo writes every byte held to w, in order.
func (p *pagedBytes) writeTo(w io.Writer) error {
	for _, pg := range p.pages {
		if _, err := w.Write(pg); err != nil {
			return err
		}
	}
	return nil
}

// appendUvarints appends x then y as uvarints (a forward list's entry).
func appendUvarints(b []byte, x, y uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, x), y)
}
