package kb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/retrieval/memstore"
	"github.com/adaptrag/adaptrag/retrieval/qdrant/qdranttest"
	"github.com/adaptrag/adaptrag/samplekb"
	"github.com/adaptrag/adaptrag/vocab"
)

var emb = embed.NewHashing(embed.HashingConfig{})

func TestSample(t *testing.T) {
	ctx := context.Background()
	k, err := kb.Sample(ctx, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	entries, _ := samplekb.FAQ()
	docs, faq, err := k.List(ctx, retrieval.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 15 || len(faq) != 1 || faq[0].Chunks != len(entries) || faq[0].Origin != samplekb.FAQFile {
		t.Fatalf("%d documents, FAQ %+v; want the handbook and %d FAQ entries", len(docs), faq, len(entries))
	}
	for _, d := range docs {
		if d.Origin == "" || !strings.HasPrefix(d.Hash, "sha256:") || d.IngestedAt.IsZero() || d.ContentType == retrieval.ContentFAQ {
			t.Errorf("document %+v", d)
		}
	}
	// The FAQ collection answers a question with its entry, by question.
	vec, _ := emb.Embed(ctx, []string{entries[0].Question})
	hits, err := k.FAQ.SearchDense(ctx, retrieval.Request{Vector: vec[0], K: 1})
	if err != nil || len(hits) != 1 || hits[0].Chunk.Meta[retrieval.MetaAnswer] != entries[0].Answer || hits[0].Score < 0.999 {
		t.Errorf("FAQ search: %+v, %v", hits, err)
	}
}

func TestFromFS(t *testing.T) {
	ctx := context.Background()
	k, err := kb.FromFS(ctx, fstest.MapFS{"hr/a.md": {Data: []byte("# A\n\nText.")}}, emb)
	if err != nil {
		t.Fatal(err)
	}
	if k.FAQ != nil || k.Target().FAQ != nil {
		t.Error("a knowledge base without FAQ files has an FAQ collection")
	}
	k.Close()
	_, err = kb.FromFS(ctx, fstest.MapFS{"bad.csv": {Data: []byte("a\n\"open\n")}}, emb)
	if !errors.Is(err, ingest.ErrMalformed) {
		t.Errorf("a broken file: err = %v, want ErrMalformed", err)
	}
	if _, err := kb.FromFS(ctx, fstest.MapFS{}, nil); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("nil embedder: err = %v", err)
	}
}

func TestOpenMissingStore(t *testing.T) {
	dir := t.TempDir()
	for _, loc := range []string{filepath.Join(dir, "typo"), dir} {
		_, err := kb.Open(context.Background(), "embedded:"+loc, kb.Options{Dim: emb.Dim()})
		if !errors.Is(err, retrieval.ErrNotFound) || !strings.Contains(err.Error(), loc) || !strings.Contains(err.Error(), "adaptrag ingest") {
			t.Errorf("%s: err = %v; want ErrNotFound naming the path and the remedy", loc, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("opening for reading created %v", entries)
	}
}

func TestOpenCreateThenRead(t *testing.T) {
	ctx := context.Background()
	loc := "embedded:" + filepath.Join(t.TempDir(), "kb")
	w, err := kb.Open(ctx, loc, kb.Options{Create: true, Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.md"), []byte("# A\n\nAlpha text."), 0o644)
	os.WriteFile(filepath.Join(src, "faq.csv"), []byte("question,answer\nQ?,A.\n"), 0o644)
	rep, err := ingest.Ingest(ctx, w.Target(), []string{src}, ingest.Options{Embedder: emb})
	if err != nil || rep.Files != 1 || rep.FAQEntries != 1 {
		t.Fatalf("ingest: %+v %v", rep, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := kb.Open(ctx, loc, kb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // a second Close is harmless
	if r.Location != loc || r.FAQ == nil || r.Docs.Dim() != emb.Dim() {
		t.Errorf("read-only KB: location %q, FAQ %v, dim %d", r.Location, r.FAQ, r.Docs.Dim())
	}
	docs, faq, err := r.List(ctx, retrieval.Scope{})
	if err != nil || len(docs) != 1 || len(faq) != 1 || docs[0].Origin != "a.md" {
		t.Errorf("List: %+v %+v %v", docs, faq, err)
	}
	if rep, _ := ingest.Ingest(ctx, r.Target(), []string{src}, ingest.Options{Embedder: emb}); !errors.Is(rep.Err(), memstore.ErrReadOnly) {
		t.Errorf("writing through a read-only KB: %v", rep.Err())
	}
	r.Close()
	if _, err := kb.Open(ctx, loc, kb.Options{Dim: emb.Dim() + 1}); !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("another embedder's dimension: err = %v", err)
	}
}

func TestOpenLocations(t *testing.T) {
	ctx := context.Background()
	for _, loc := range []string{"", "docs/", "qdrant:/", "ftp://host/c", "qdrant://host:99999/c", "qdrant://host/a/b", "qdrant://host:6334/c?dim=x"} {
		_, err := kb.Open(ctx, loc, kb.Options{})
		if !errors.Is(err, kb.ErrLocation) {
			t.Errorf("%q: err = %v, want ErrLocation", loc, err)
		}
	}
}

func TestOpenQdrant(t *testing.T) {
	srv := qdranttest.Start(t)
	ctx := context.Background()
	loc := fmt.Sprintf("qdrant://%s/handbook?dim=%d", srv.Addr(), emb.Dim())
	// Reading a collection that does not exist fails and creates nothing.
	if _, err := kb.Open(ctx, loc, kb.Options{}); !errors.Is(err, retrieval.ErrNotFound) || !strings.Contains(err.Error(), "adaptrag ingest") {
		t.Fatalf("missing collection: err = %v, want ErrNotFound with the remedy", err)
	}
	if _, err := kb.Open(ctx, loc, kb.Options{}); !errors.Is(err, retrieval.ErrNotFound) {
		t.Fatalf("the failed read created the collection: %v", err)
	}
	w, err := kb.Open(ctx, loc, kb.Options{Create: true, Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := kb.Open(ctx, loc, kb.Options{Dim: emb.Dim()})
	if err != nil || r.FAQ == nil {
		t.Fatalf("open for reading: %v", err)
	}
	defer r.Close()
	// Qdrant lists its documents too (by scrolling the payloads).
	if docs, _, err := r.List(ctx, retrieval.Scope{}); err != nil || len(docs) != 0 {
		t.Errorf("List on an empty Qdrant collection: %d documents, err = %v", len(docs), err)
	}
}

// The vocabulary is built from in-memory files, and saved per tenant beside
// an embedded store and read back when it is opened.
func TestVocabulary(t *testing.T) {
	ctx := context.Background()
	files := fstest.MapFS{"plans.csv": {Data: []byte("Plan,Price\nSpark,$25\nFlow,$45\n")}}
	m, err := kb.FromFS(ctx, files, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if k := m.Vocab.Kind("Flow"); k == "" || k != m.Vocab.Kind("Spark") {
		t.Fatalf("in memory: kinds %q, %q", k, m.Vocab.Kind("Spark"))
	}
	loc := "embedded:" + filepath.Join(t.TempDir(), "kb")
	w, err := kb.Open(ctx, loc, kb.Options{Create: true, Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddVocab("", m.Vocab); err != nil {
		t.Fatal(err)
	}
	if err := w.AddVocab("acme", vocab.New([]vocab.Term{{Name: "Surge", Kind: "plan"}})); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := kb.Open(ctx, loc, kb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Vocab.Kind("Spark") == "" || r.Vocab.Kind("Surge") != "" {
		t.Errorf("default tenant: Spark %q, Surge %q", r.Vocab.Kind("Spark"), r.Vocab.Kind("Surge"))
	}
	acme, err := r.VocabOf("acme")
	if err != nil || acme.Kind("Surge") != "plan" || acme.Kind("Spark") != "" {
		t.Errorf("tenant acme: %v, %+v", err, acme.Terms())
	}
}
