package memstore

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
)

// dump renders the whole state of s canonically (every chunk of every
// tenant, with its vector rounded), so that two stores can be compared.
func dump(s *Store) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return strings.Join(recordLines(s, "%.5g"), "\n")
}

// recordLines renders every chunk of s, one line each, sorted, with its
// vector in the format vec; the caller holds s.mu.
func recordLines(s *Store, vec string) []string {
	var lines []string
	for k, iid := range s.byKey.all(s.recs) {
		c := s.recs[iid].Chunk
		v, _ := s.vec.Vector(iid)
		meta := slices.Sorted(maps.Keys(c.Meta))
		var m []string
		for _, key := range meta {
			m = append(m, key+"="+c.Meta[key])
		}
		lines = append(lines, fmt.Sprintf("%q/%q doc=%q src=%q title=%q type=%q pos=%d text=%q meta=%v vec="+vec,
			k.tenant, k.id, c.DocID, c.Source, c.Title, c.ContentType, c.Position, c.Text, m, v))
	}
	slices.Sort(lines)
	return lines
}

// fileState fingerprints every file of dir: name, size, mode and content.
func fileState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%d %v %x", len(b), info.Mode(), sha256.Sum256(b))
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// copyDir copies the files of src into a new temporary directory, leaving
// out the names in skip.
func copyDir(t *testing.T, src string, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || slices.Contains(skip, e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// docChunks returns the chunks of version v of document doc of tenant
// "t": 1 + (v % 5) chunks, each naming the version in its text, so that a
// reader can tell versions apart and spot a mix.
func docChunks(doc string, v int) []retrieval.Chunk {
	n := 1 + v%5
	out := make([]retrieval.Chunk, n)
	for j := range out {
		vec := make([]float32, 8)
		vec[j%8] = 1
		vec[(v+j)%8] += 0.5
		out[j] = retrieval.Chunk{
			ID: fmt.Sprintf("%s-%d", doc, j), DocID: doc, Tenant: "t", Position: j,
			Text:   fmt.Sprintf("common %s version%d part%d of%d", doc, v, j, n),
			Meta:   map[string]string{"version": fmt.Sprint(v), "parts": fmt.Sprint(n)},
			Vector: vec,
		}
	}
	return out
}

// docVersions reads back every document of tenant "t" written by
// docChunks and returns its version, or an error describing a document
// that is not exactly one whole version.
func docVersions(s *Store) (map[string]int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{}
	for dk, iids := range s.byDoc {
		if dk.tenant != "t" {
			continue
		}
		v, n := -1, -1
		for _, iid := range iids.appendTo(nil) {
			c := &s.recs[iid].Chunk
			var cv, cn int
			fmt.Sscan(c.Meta["version"], &cv)
			fmt.Sscan(c.Meta["parts"], &cn)
			if v >= 0 && (cv != v || cn != n) {
				return nil, fmt.Errorf("document %s mixes versions %d and %d", dk.doc, v, cv)
			}
			v, n = cv, cn
		}
		if iids.len() != n {
			return nil, fmt.Errorf("document %s version %d has %d of its %d chunks", dk.doc, v, iids.len(), n)
		}
		out[dk.doc] = v
	}
	return out, nil
}
