//go:build linux

package bm25

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// BenchmarkBM25ReadInPlace is BenchmarkBM25ReadIndex for an index read in
// place from its file, mapped copy-on-write as a store maps sparse.idx:
// one op of N= maps the file and reads it (the checks a writer's open
// makes; the rest is Check's), and search/N= queries the mapped index,
// whose arrays lie on the file's 4 KiB pages rather than on the huge
// pages of a copy.
//
//	go test -run '^$' -bench 'ReadIndex|ReadInPlace' -count 3 ./retrieval/bm25/
func BenchmarkBM25ReadInPlace(b *testing.B) {
	for _, n := range workload.Sizes() {
		w, file := benchFile(b, n)
		path := filepath.Join(b.TempDir(), "bm25.idx")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			b.Fatal(err)
		}
		read := func() *Index {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			m, err := syscall.Mmap(int(f.Fd()), 0, len(file), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
			if err != nil {
				b.Fatal(err)
			}
			x, err := ReadIndexInPlace(m, Params{}, func() { _ = syscall.Munmap(m) })
			if err != nil {
				b.Fatal(err)
			}
			return x
		}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				read()
			}
		})
		mapped := read()
		b.Run(fmt.Sprintf("search/N=%d", n), func(b *testing.B) { benchQueries(b, mapped, w) })
	}
}
