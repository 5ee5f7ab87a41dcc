package bm25

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// bytes returns every byte held, in one slice (tests).
func (p *pagedBytes) bytes() []byte {
	var b bytes.Buffer
	p.writeTo(&b)
	return b.Bytes()
}

// TestPagedBytes: appends of every size, across page boundaries, read back
// by slice over any range equal a plain slice; full pages never move.
func TestPagedBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var p pagedBytes
	var want []byte
	var firstPage *byte
	for len(want) < 3*pageSize+12345 {
		n := r.IntN(5000)
		if r.IntN(50) == 0 {
			n = pageSize + r.IntN(pageSize) // longer than a page
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		p.append(b)
		want = append(want, b...)
		if len(p.pages) > 1 {
			if firstPage == nil {
				firstPage = &p.pages[0][0]
			} else if &p.pages[0][0] != firstPage {
				t.Fatal("a full page moved")
			}
		}
	}
	if p.Len() != len(want) || !bytes.Equal(p.bytes(), want) {
		t.Fatalf("holds %d bytes, want %d, or other bytes", p.Len(), len(want))
	}
	for i, pg := range p.pages[:len(p.pages)-1] {
		if len(pg) != pageSize {
			t.Fatalf("page %d holds %d bytes, want %d", i, len(pg), pageSize)
		}
	}
	var buf []byte
	check := func(lo, hi int) {
		t.Helper()
		if got := p.slice(lo, hi, &buf); !bytes.Equal(got, want[lo:hi]) {
			t.Fatalf("slice(%d, %d): %d bytes, not the ones appended", lo, hi, len(got))
		}
	}
	for range 2000 {
		lo := r.IntN(len(want))
		check(lo, lo+r.IntN(min(len(want)-lo, 3000)+1))
	}
	for _, at := range []int{pageSize, 2 * pageSize, 3 * pageSize} {
		check(at-1, at+1)
		check(at-7, at)
		check(at, at+7)
		check(at-pageSize, at)
	}
	check(0, len(want))
	check(5, 5)

	q := pagedOf(slices.Clone(want))
	if !bytes.Equal(q.bytes(), want) || len(q.pages) != len(p.pages) {
		t.Fatal("pagedOf does not hold the bytes in the same pages")
	}
	keep := slices.Clone(want)
	q.append([]byte{1, 2, 3})
	if !bytes.Equal(q.slice(0, len(want), &buf), keep) || !bytes.Equal(q.slice(len(want), len(want)+3, &buf), []byte{1, 2, 3}) {
		t.Fatal("append after pagedOf changed the bytes held")
	}
}
