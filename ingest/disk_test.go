package ingest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

// writeFiles creates files (slash-separated name -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// docTexts returns the sorted texts of the stored chunks.
func docTexts(s *memStore) []string {
	out := texts(s.all())
	slices.Sort(out)
	return out
}

func TestSameFileNameInTwoFoldersStaysTwoDocuments(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a/same.md": "alpha", "b/same.md": "beta"})
	store := newMemStore(0)
	a, b := filepath.Join(dir, "a", "same.md"), filepath.Join(dir, "b", "same.md")
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{a, b}, ingest.Options{})
	if err != nil || rep.Files != 2 {
		t.Fatalf("rep %+v, err %v", rep, err)
	}
	if got := docTexts(store); !slices.Equal(got, []string{"same\nalpha", "same\nbeta"}) {
		t.Errorf("stored %q, want both files", got)
	}
	// Both keep the origin a user can open, relative to their folder.
	for _, c := range store.all() {
		if c.Meta[retrieval.MetaOrigin] != "same.md" || !strings.HasPrefix(c.DocID, "file://") {
			t.Errorf("chunk of %s: origin %q", c.DocID, c.Meta[retrieval.MetaOrigin])
		}
	}
}

func TestSubfolderReingestAddsNoDuplicate(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"hr/leave.md": "Annual leave is five days.", "it/vpn.md": "Use port 443."})
	store := newMemStore(0)
	ctx := context.Background()
	for _, p := range []string{dir, filepath.Join(dir, "hr"), filepath.Join(dir, "hr", "leave.md"), dir} {
		if _, err := ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{p}, ingest.Options{}); err != nil {
			t.Fatal(err)
		}
		if n := len(store.all()); n != 2 {
			t.Fatalf("after ingesting %s: %d chunks, want 2: %q", p, n, docTexts(store))
		}
	}
	// The same folder twice in one run counts once.
	rep, _ := ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{dir, filepath.Join(dir, "hr")}, ingest.Options{})
	if rep.Files != 2 {
		t.Errorf("folder and subfolder in one run: %d files, want 2", rep.Files)
	}
}

func TestLinksOutsideTheFolderAreNotFollowed(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "top secret", "more/x.md": "outside folder"})
	writeFiles(t, dir, map[string]string{"notes.txt": "hello", "sub/page.md": "inner page"})
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "passwd.txt")) // absolute, outside
	symlink(t, "../../"+filepath.Base(outside)+"/secret.txt", filepath.Join(dir, "sub", "rel.txt"))
	symlink(t, "notes.txt", filepath.Join(dir, "alias.txt"))                       // inside: the same document
	symlink(t, filepath.Join(dir, "sub", "page.md"), filepath.Join(dir, "abs.md")) // inside, absolute
	symlink(t, filepath.Join(outside, "more"), filepath.Join(dir, "moredir"))      // a folder outside
	symlink(t, "sub", filepath.Join(dir, "subdir"))                                // a folder: not walked
	symlink(t, "nowhere.txt", filepath.Join(dir, "dangling.txt"))

	store := newMemStore(0)
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := docTexts(store); !slices.Equal(got, []string{"notes\nhello", "page\ninner page"}) {
		t.Errorf("stored %q, want the two files once each and nothing from outside", got)
	}
	failed := map[string]error{}
	for _, fe := range rep.Errors {
		rel, _ := filepath.Rel(dir, fe.Path)
		failed[filepath.ToSlash(rel)] = fe.Err
	}
	for _, p := range []string{"passwd.txt", "sub/rel.txt", "moredir"} {
		if !errors.Is(failed[p], ingest.ErrOutsideRoot) {
			t.Errorf("%s: err %v, want ErrOutsideRoot", p, failed[p])
		}
	}
	if !errors.Is(failed["dangling.txt"], os.ErrNotExist) || len(failed) != 4 {
		t.Errorf("errors %v", failed)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "folder") {
		t.Errorf("skipped %+v, want the folder link", rep.Skipped)
	}
	// The inside link and its target are one document, named by the target.
	for _, c := range store.all() {
		if o := c.Meta[retrieval.MetaOrigin]; o != "notes.txt" && o != "sub/page.md" {
			t.Errorf("origin %q", o)
		}
	}

	// Opting in follows file links (never folder links).
	store = newMemStore(0)
	rep, _ = ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, ingest.Options{FollowSymlinks: true})
	if got := docTexts(store); len(got) != 4 || !slices.Contains(got, "passwd\ntop secret") || !slices.Contains(got, "rel\ntop secret") {
		t.Errorf("with FollowSymlinks: %q", got)
	}
	if len(rep.Skipped) != 2 || len(rep.Errors) != 1 {
		t.Errorf("with FollowSymlinks: skipped %+v, errors %v; want both folder links skipped", rep.Skipped, rep.Errors)
	}
}

func TestLinksInAFileSystem(t *testing.T) {
	m := fstest.MapFS{
		"a.txt":       {Data: []byte("content a")},
		"link.txt":    {Data: []byte("a.txt"), Mode: os.ModeSymlink},
		"escape.txt":  {Data: []byte("../etc/passwd"), Mode: os.ModeSymlink},
		"sub/up.txt":  {Data: []byte("../a.txt"), Mode: os.ModeSymlink},
		"sub/abs.txt": {Data: []byte("/etc/passwd"), Mode: os.ModeSymlink},
	}
	chunks, rep, err := ingest.LoadFS(context.Background(), m, ingest.Options{})
	if err != nil || len(chunks) != 1 || rep.Files != 1 {
		t.Fatalf("chunks %q, rep %+v, err %v: want a.txt once", texts(chunks), rep, err)
	}
	if len(rep.Errors) != 2 || !errors.Is(rep.Err(), ingest.ErrOutsideRoot) {
		t.Errorf("errors %v, want the two escaping links", rep.Errors)
	}
}

func TestBinaryContentIsRefused(t *testing.T) {
	dir := t.TempDir()
	noise := make([]byte, 20000)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(noise)
	utf16 := []byte{0xff, 0xfe, 'h', 0, 'i', 0}
	writeFiles(t, dir, map[string]string{
		"random.txt": string(noise),
		"utf16.md":   string(utf16),
		"escapes.md": strings.Repeat("\x1b[1m\x1b", 50) + "x",
		"gbk.txt":    "\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7 hello", // "你好世界" in GBK
		"ok.txt":     "caf\xe9 is fine: one stray byte in a long enough line of text",
	})
	store := newMemStore(0)
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, fe := range rep.Errors {
		if !errors.Is(fe.Err, ingest.ErrBinary) {
			t.Errorf("%s: %v, want ErrBinary", fe.Path, fe.Err)
		}
		bad = append(bad, filepath.Base(fe.Path))
	}
	slices.Sort(bad)
	if !slices.Equal(bad, []string{"escapes.md", "gbk.txt", "random.txt", "utf16.md"}) {
		t.Errorf("refused %v", bad)
	}
	if got := docTexts(store); len(got) != 1 || !strings.Contains(got[0], "caf\ufffd is fine") {
		t.Errorf("stored %q, want only ok.txt", got)
	}
}

// interrupting cancels the run's context right after the first write of
// any kind reaches the store, like a Ctrl-C at the worst moment.
type interrupting struct {
	*memStore
	cancel context.CancelFunc
}

func (s interrupting) Upsert(ctx context.Context, cs []retrieval.Chunk) error {
	defer s.cancel()
	return s.memStore.Upsert(ctx, cs)
}

func (s interrupting) DeleteDocument(ctx context.Context, sc retrieval.Scope, id string) error {
	defer s.cancel()
	return s.memStore.DeleteDocument(ctx, sc, id)
}

func (s interrupting) ReplaceDocument(ctx context.Context, sc retrieval.Scope, id string, cs []retrieval.Chunk) error {
	defer s.cancel()
	return s.memStore.ReplaceDocument(ctx, sc, id, cs)
}

func TestReplacementIsOneAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Version one of a long policy paragraph. ", 40)
	writeFiles(t, dir, map[string]string{"policy.txt": long})
	store := newMemStore(4)
	emb := &hashEmbedder{dim: 4}
	o := ingest.Options{Embedder: emb, ChunkSize: 100, BatchSize: 2}
	if _, err := ingest.Ingest(context.Background(), ingest.Target{Docs: store}, []string{dir}, o); err != nil {
		t.Fatal(err)
	}
	before := docTexts(store)
	if len(before) < 4 {
		t.Fatalf("%d chunks, want several batches", len(before))
	}
	if store.replaces != 1 || store.upserts != 0 || store.deletes != 0 {
		t.Errorf("writes: %d replaces, %d upserts, %d deletes; want one ReplaceDocument", store.replaces, store.upserts, store.deletes)
	}

	// Interrupted right after its first write, the store holds one whole
	// version: the new one, since that write was the whole replacement.
	writeFiles(t, dir, map[string]string{"policy.txt": strings.ReplaceAll(long, "one", "two")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _ = ingest.Ingest(ctx, ingest.Target{Docs: interrupting{store, cancel}}, []string{dir}, o)
	after := docTexts(store)
	if len(after) != len(before) || !strings.Contains(after[0], "two") {
		t.Errorf("after an interrupted re-ingest: %d chunks %q, want the whole new version", len(after), after)
	}

	// Cancelled while embedding: nothing is written.
	writeFiles(t, dir, map[string]string{"policy.txt": strings.ReplaceAll(long, "one", "three")})
	ctx, cancel = context.WithCancel(context.Background())
	cancelling := &cancelOnEmbed{hashEmbedder: emb, after: 1, cancel: cancel}
	writes := store.replaces
	_, err := ingest.Ingest(ctx, ingest.Target{Docs: store}, []string{dir}, ingest.Options{Embedder: cancelling, ChunkSize: 100, BatchSize: 2})
	if !errors.Is(err, context.Canceled) || store.replaces != writes || !slices.Equal(docTexts(store), after) {
		t.Errorf("cancelled mid-embedding: err %v, %d writes; want context.Canceled and the stored version kept", err, store.replaces-writes)
	}
}

// cancelOnEmbed cancels a context after a number of Embed calls.
type cancelOnEmbed struct {
	*hashEmbedder
	after, calls int
	cancel       context.CancelFunc
}

func (e *cancelOnEmbed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.calls++; e.calls > e.after {
		e.cancel()
		return nil, ctx.Err()
	}
	return e.hashEmbedder.Embed(ctx, texts)
}

func TestPruneDeletesVanishedFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "kb")
	writeFiles(t, dir, map[string]string{
		"hr/leave.md": "Leave.", "hr/old.md": "Old policy.", "it/vpn.md": "VPN.",
		"faq.jsonl": `{"id":"1","question":"Q?","answer":"A."}`,
	})
	writeFiles(t, root, map[string]string{"elsewhere/keep.md": "Not under kb."})
	docs, faq := newMemStore(0), newMemStore(0)
	tgt := ingest.Target{Docs: docs, FAQ: faq}
	ctx := context.Background()
	if _, err := ingest.Ingest(ctx, tgt, []string{dir, filepath.Join(root, "elsewhere")}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	// Another tenant's copy of the same files is not touched.
	if _, err := ingest.Ingest(ctx, tgt, []string{dir}, ingest.Options{Tenant: "other"}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "hr", "old.md"))
	os.Remove(filepath.Join(dir, "faq.jsonl"))

	// Without Prune nothing goes.
	if _, err := ingest.Ingest(ctx, tgt, []string{dir}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(docs.all()) != 7 || len(faq.all()) != 2 {
		t.Fatalf("without Prune: %d doc chunks, %d FAQ chunks", len(docs.all()), len(faq.all()))
	}
	// Pruning a subfolder removes only what lies under it.
	rep, err := ingest.Ingest(ctx, tgt, []string{filepath.Join(dir, "it")}, ingest.Options{Prune: true})
	if err != nil || len(rep.Pruned) != 0 {
		t.Fatalf("prune it/: %v, pruned %+v", err, rep.Pruned)
	}
	rep, err = ingest.Ingest(ctx, tgt, []string{dir}, ingest.Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	var pruned []string
	for _, d := range rep.Pruned {
		pruned = append(pruned, d.Origin)
	}
	slices.Sort(pruned)
	if !slices.Equal(pruned, []string{"faq.jsonl", "hr/old.md"}) {
		t.Errorf("pruned %q", pruned)
	}
	for _, c := range docs.all() {
		if c.Tenant == "" && strings.Contains(c.Text, "Old policy") {
			t.Error("the deleted file's chunk survived the prune")
		}
	}
	if countTenant(docs, "") != 3 || countTenant(docs, "other") != 3 || countTenant(faq, "") != 0 || countTenant(faq, "other") != 1 {
		t.Errorf("left %d+%d doc chunks, %d+%d FAQ chunks", countTenant(docs, ""), countTenant(docs, "other"), countTenant(faq, ""), countTenant(faq, "other"))
	}

	// A moved folder: pruning its old location removes all it held.
	if err := os.Rename(dir, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	rep, err = ingest.Ingest(ctx, tgt, []string{dir}, ingest.Options{Prune: true})
	if err != nil || len(rep.Pruned) != 2 || len(rep.Errors) != 0 || countTenant(docs, "") != 1 {
		t.Errorf("prune of a moved folder: err %v, pruned %+v, errors %v, %d chunks left", err, rep.Pruned, rep.Errors, countTenant(docs, ""))
	}
	// A second time there is nothing left, and the missing path is reported.
	rep, _ = ingest.Ingest(ctx, tgt, []string{dir}, ingest.Options{Prune: true})
	if len(rep.Errors) != 1 || !errors.Is(rep.Errors[0].Err, os.ErrNotExist) {
		t.Errorf("errors %v, want the missing folder", rep.Errors)
	}
}

func countTenant(s *memStore, tenant string) int {
	n := 0
	for _, c := range s.all() {
		if c.Tenant == tenant {
			n++
		}
	}
	return n
}

// noLister hides the Lister of a store.
type noLister struct{ retrieval.Store }

func TestPruneNeedsALister(t *testing.T) {
	_, err := ingest.Ingest(context.Background(), ingest.Target{Docs: noLister{newMemStore(0)}}, []string{t.TempDir()}, ingest.Options{Prune: true})
	if !errors.Is(err, ingest.ErrNoLister) {
		t.Errorf("err = %v, want ErrNoLister", err)
	}
}

func TestSkippedFilesAreNamed(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.png": "x", "docs/b.odt": "y", ".hidden.txt": "z"})
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: newMemStore(0)}, []string{dir}, ingest.Options{})
	if err != nil || rep.Files != 0 {
		t.Fatal(err, rep)
	}
	var names []string
	for _, s := range rep.Skipped {
		names = append(names, filepath.ToSlash(strings.TrimPrefix(s.Path, dir)))
	}
	if !slices.Equal(names, []string{"/a.png", "/docs/b.odt"}) || rep.Skipped[0].Reason == "" {
		t.Errorf("skipped %+v", rep.Skipped)
	}
}
