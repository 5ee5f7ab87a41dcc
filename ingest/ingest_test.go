package ingest_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

func TestStableIDs(t *testing.T) {
	fsys := os.DirFS(filepath.Join("testdata", "loaders"))
	o := ingest.Options{Tenant: "acme", ChunkSize: 60, Overlap: 10}
	a, repA, err := ingest.LoadFS(context.Background(), fsys, o)
	if err != nil || len(repA.Errors) > 0 {
		t.Fatalf("LoadFS: %v %v", err, repA.Errors)
	}
	b, _, _ := ingest.LoadFS(context.Background(), fsys, o)
	if !slices.Equal(ids(a), ids(b)) {
		t.Fatal("ids differ between two loads of the same files")
	}
	seen := map[string]bool{}
	for _, c := range a {
		if seen[c.ID] {
			t.Errorf("duplicate chunk id %s", c.ID)
		}
		seen[c.ID] = true
		if c.DocID != ingest.DocID(c.Meta[retrieval.MetaOrigin]) || c.Tenant != "acme" {
			t.Errorf("chunk %s: doc %s origin %s tenant %q", c.ID, c.DocID, c.Meta[retrieval.MetaOrigin], c.Tenant)
		}
	}
	// Another tenant gets other chunk ids for the same content.
	other, _, _ := ingest.LoadFS(context.Background(), fsys, ingest.Options{Tenant: "other", ChunkSize: 60, Overlap: 10})
	if other[0].ID == a[0].ID {
		t.Error("chunk ids do not depend on the tenant")
	}
	// Editing one record changes that chunk's id only.
	m := fstest.MapFS{"faq.jsonl": {Data: []byte(`{"id":"1","question":"Q1","answer":"A1"}` + "\n" + `{"id":"2","question":"Q2","answer":"A2"}`)}}
	before, _, _ := ingest.LoadFS(context.Background(), m, ingest.Options{})
	m["faq.jsonl"].Data = []byte(`{"id":"1","question":"Q1","answer":"A1 changed"}` + "\n" + `{"id":"2","question":"Q2","answer":"A2"}`)
	after, _, _ := ingest.LoadFS(context.Background(), m, ingest.Options{})
	if before[0].ID == after[0].ID || before[1].ID != after[1].ID {
		t.Errorf("ids before %v after %v: want only the first to change", ids(before), ids(after))
	}
}

func TestDocIDIsPathBased(t *testing.T) {
	if ingest.DocID("hr/leave.md") != ingest.DocID("./hr//leave.md") {
		t.Error("equivalent paths give different doc ids")
	}
	if ingest.DocID("hr/leave.md") == ingest.DocID("it/leave.md") {
		t.Error("different paths give the same doc id")
	}
}

func TestIngestIdempotentAndReplacesStaleChunks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("报销须在费用发生后三十天内提交。", 20)
	write("finance/claims.md", "# Claims\n\n"+long)
	write("hr/leave.txt", "Annual leave is 5 days.")
	store := newMemStore(8)
	emb := &hashEmbedder{dim: 8}
	o := ingest.Options{Tenant: "t1", Embedder: emb, ChunkSize: 100, Overlap: 20}
	ctx := context.Background()

	rep, err := ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{dir}, o)
	if err != nil || rep.Err() != nil {
		t.Fatalf("first ingest: %v %v", err, rep.Err())
	}
	first := store.all()
	if len(first) != rep.Chunks || rep.Files != 2 || len(first) < 4 {
		t.Fatalf("stored %d chunks, report %+v", len(first), rep)
	}
	for _, c := range first {
		if len(c.Vector) != 8 || c.Tenant != "t1" {
			t.Fatalf("chunk %s: vector %d, tenant %q", c.ID, len(c.Vector), c.Tenant)
		}
	}

	// Same files again: the store is unchanged.
	if _, err := ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{dir}, o); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(first, store.all(), func(a, b retrieval.Chunk) bool { return a.ID == b.ID && a.Text == b.Text }) {
		t.Fatal("re-ingesting unchanged files changed the store")
	}

	// The claims file shrinks: its old chunks must all go.
	write("finance/claims.md", "# Claims\n\nShort now.")
	rep, err = ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{dir}, o)
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	var got []string
	for _, c := range store.all() {
		got = append(got, c.Source+": "+c.Text)
	}
	slices.Sort(got)
	want := []string{"finance: Claims\nShort now.", "hr: leave\nAnnual leave is 5 days."}
	if !slices.Equal(got, want) {
		t.Errorf("store after the change:\n got %q\nwant %q", got, want)
	}
}

func TestIngestIsolatesFileErrors(t *testing.T) {
	store := newMemStore(0)
	root := filepath.Join("testdata", "mixed")
	missing := filepath.Join("testdata", "no-such-dir")
	png := filepath.Join(root, "it", "logo.png") // skipped in a walk, an error when named
	var progress []ingest.Progress
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{root, missing, png}, ingest.Options{
		Progress: func(p ingest.Progress) { progress = append(progress, p) },
	})
	if err != nil {
		t.Fatalf("Ingest: %v (per-file errors must not stop the run)", err)
	}
	if rep.Files != 3 || len(rep.Skipped) != 1 || filepath.Base(rep.Skipped[0].Path) != "logo.png" {
		t.Errorf("report %+v: want 3 good files and the .png skipped", rep)
	}
	failed := map[string]error{}
	for _, fe := range rep.Errors {
		failed[filepath.ToSlash(fe.Path)] = fe.Err
	}
	for _, p := range []string{"testdata/mixed/finance/broken.csv", "testdata/mixed/hr/broken.jsonl"} {
		if !errors.Is(failed[p], ingest.ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", p, failed[p])
		}
	}
	if !errors.Is(failed["testdata/no-such-dir"], fs.ErrNotExist) {
		t.Errorf("missing path: err %v, want fs.ErrNotExist", failed["testdata/no-such-dir"])
	}
	if !errors.Is(failed["testdata/mixed/it/logo.png"], ingest.ErrUnsupported) {
		t.Errorf("named .png: err %v, want ErrUnsupported", failed["testdata/mixed/it/logo.png"])
	}
	if len(rep.Errors) != 4 {
		t.Errorf("errors = %v", rep.Errors)
	}
	var fe *ingest.FileError
	if !errors.As(rep.Err(), &fe) || !errors.Is(rep.Err(), ingest.ErrMalformed) {
		t.Errorf("Report.Err() = %v does not unwrap to a FileError with ErrMalformed", rep.Err())
	}
	sources := map[string]int{}
	for _, c := range store.all() {
		sources[c.Source]++
	}
	if sources["finance"] != 1 || sources["hr"] != 1 || sources["it"] != 1 || len(sources) != 3 {
		t.Errorf("stored sources = %v, want one chunk each from finance, hr and it", sources)
	}
	last := progress[len(progress)-1]
	if len(progress) != 1+6 || last.FilesDone != last.FilesTotal || last.FilesTotal != 7 {
		t.Errorf("progress calls %d, last %+v", len(progress), last)
	}
}

func TestIngestBatchesEmbeddings(t *testing.T) {
	m := fstest.MapFS{"it/faq.jsonl": {Data: []byte(strings.Repeat(`{"question":"q","answer":"a"}`+"\n", 5))}}
	emb := &hashEmbedder{dim: 4}
	docs, faq := newMemStore(4), newMemStore(4)
	rep, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: docs, FAQ: faq}, m, ingest.Options{Embedder: emb, BatchSize: 2})
	if err != nil || rep.FAQEntries != 5 || len(faq.all()) != 5 {
		t.Fatalf("rep %+v err %v, %d FAQ chunks stored", rep, err, len(faq.all()))
	}
	if !slices.Equal(emb.batches, []int{2, 2, 1}) {
		t.Errorf("embed batches = %v, want [2 2 1]", emb.batches)
	}
	if faq.replaces != 1 || faq.upserts != 0 {
		t.Errorf("%d replaces and %d upserts, want the whole file in one ReplaceDocument", faq.replaces, faq.upserts)
	}
}

func TestIngestDimensionMismatch(t *testing.T) {
	_, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: newMemStore(8)}, fstest.MapFS{}, ingest.Options{Embedder: &hashEmbedder{dim: 4}})
	if !errors.Is(err, retrieval.ErrDimension) {
		t.Errorf("err = %v, want retrieval.ErrDimension", err)
	}
	if _, err := ingest.IngestFS(context.Background(), ingest.Target{}, fstest.MapFS{}, ingest.Options{}); !errors.Is(err, retrieval.ErrInvalid) {
		t.Errorf("nil store: err = %v, want retrieval.ErrInvalid", err)
	}
}

func TestIngestEmbedFailureKeepsPreviousVersion(t *testing.T) {
	m := fstest.MapFS{"hr/a.txt": {Data: []byte("version one")}}
	store := newMemStore(4)
	if _, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: store}, m, ingest.Options{Embedder: &hashEmbedder{dim: 4}}); err != nil {
		t.Fatal(err)
	}
	m["hr/a.txt"].Data = []byte("version two")
	boom := errors.New("embedding service down")
	rep, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: store}, m, ingest.Options{Embedder: &hashEmbedder{dim: 4, err: boom}})
	if err != nil || len(rep.Errors) != 1 || !errors.Is(rep.Errors[0].Err, boom) {
		t.Fatalf("rep %+v err %v: want one file error wrapping the embedder's", rep, err)
	}
	if got := store.all(); len(got) != 1 || !strings.HasSuffix(got[0].Text, "version one") {
		t.Errorf("store = %q, want the previous version kept", texts(got))
	}
}

func TestIngestContextEnds(t *testing.T) {
	m := fstest.MapFS{"a.txt": {Data: []byte("a")}, "b.txt": {Data: []byte("b")}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	rep, err := ingest.IngestFS(ctx, ingest.Target{Docs: newMemStore(4)}, m, ingest.Options{Embedder: blockingEmbedder{}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a wrapped context.DeadlineExceeded", err)
	}
	if len(rep.Errors) != 0 {
		t.Errorf("a timeout was recorded as a file error: %v", rep.Errors)
	}

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, _, err := ingest.LoadFS(cancelled, m, ingest.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("LoadFS with a cancelled context: err = %v", err)
	}
}

func TestSourceDefaults(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "legal")
	if err := os.MkdirAll(filepath.Join(sub, "contracts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(sub, "top.txt"), filepath.Join(sub, "contracts", "nda.txt")} {
		if err := os.WriteFile(p, []byte("text of "+filepath.Base(p)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sources := func(paths []string, o ingest.Options) []string {
		store := newMemStore(0)
		if _, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, paths, o); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range store.all() {
			out = append(out, c.Meta[retrieval.MetaOrigin]+"="+c.Source)
		}
		slices.Sort(out)
		return out
	}
	// Root "dir": the top folder under it.
	if got := sources([]string{dir}, ingest.Options{}); !slices.Equal(got, []string{"legal/contracts/nda.txt=legal", "legal/top.txt=legal"}) {
		t.Errorf("from the parent: %q", got)
	}
	// Root "legal": files directly in it take the root's name.
	if got := sources([]string{sub}, ingest.Options{}); !slices.Equal(got, []string{"contracts/nda.txt=contracts", "top.txt=legal"}) {
		t.Errorf("from legal/: %q", got)
	}
	// A single file: its folder's name; Options.Source overrides everything.
	if got := sources([]string{filepath.Join(sub, "top.txt")}, ingest.Options{}); !slices.Equal(got, []string{"top.txt=legal"}) {
		t.Errorf("single file: %q", got)
	}
	if got := sources([]string{dir}, ingest.Options{Source: "kb"}); !slices.Equal(got, []string{"legal/contracts/nda.txt=kb", "legal/top.txt=kb"}) {
		t.Errorf("override: %q", got)
	}
}

func TestChunksKeepHeadingsApart(t *testing.T) {
	md := "# Guide\n\n## A\n\n" + strings.Repeat("Alpha text. ", 5) + "\n\n## B\n\nBeta text.\n"
	doc, err := ingest.Parse("guide.md", []byte(md), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := ingest.Chunks(doc, ingest.Options{ChunkSize: 1000})
	if len(cs) != 2 {
		t.Fatalf("chunks %q: two small sections must stay two chunks", texts(cs))
	}
	if !strings.HasPrefix(cs[0].Text, "Guide > A\nAlpha") || strings.Contains(cs[0].Text, "Beta") ||
		cs[1].Text != "Guide > B\nBeta text." || cs[1].Title != "Guide > B" || cs[1].Position != 1 {
		t.Errorf("chunks = %q", texts(cs))
	}
	// The heading path counts towards the chunk size.
	long := "# Guide\n\n## Section\n\n" + strings.Repeat("句子很长很长。", 100)
	doc, _ = ingest.Parse("g.md", []byte(long), ingest.Options{})
	for _, c := range ingest.Chunks(doc, ingest.Options{ChunkSize: 120, Overlap: 20}) {
		if n := len([]rune(c.Text)); n > 120 {
			t.Errorf("chunk of %d runes with its heading, limit 120", n)
		}
		if !strings.HasPrefix(c.Text, "Guide > Section\n") {
			t.Errorf("chunk without its heading path: %q", c.Text)
		}
	}
}

func ids(cs []retrieval.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
