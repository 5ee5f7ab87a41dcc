package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/samplekb"
)

func write(t *testing.T, dir string, files map[string]string) {
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

func TestIngestNamesSkippedFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 7 {
		files[string(rune('a'+i))+".png"] = "x"
	}
	write(t, dir, files)
	store := "embedded:" + filepath.Join(t.TempDir(), "kb")
	out, errs, code := cli(t, "ingest", "--store", store, dir)
	if code != 1 || !strings.Contains(errs, "nothing ingested") || !strings.Contains(errs, "skipped 7 files") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, name := range []string{"a.png", "e.png"} {
		if !strings.Contains(errs, name) {
			t.Errorf("stderr does not name %s:\n%s", name, errs)
		}
	}
	if strings.Contains(errs, "g.png") || !strings.Contains(errs, "2 more") {
		t.Errorf("without --verbose, want the first five and a count:\n%s", errs)
	}
	_, errs, _ = cli(t, "ingest", "--verbose", "--store", store, dir)
	if !strings.Contains(errs, "g.png") {
		t.Errorf("--verbose does not name every file:\n%s", errs)
	}
}

func TestIngestWithoutUsableInput(t *testing.T) {
	dir := t.TempDir()
	store := "embedded:" + filepath.Join(dir, "kb")
	for name, args := range map[string][]string{
		"missing path": {filepath.Join(dir, "nope")},
		"empty folder": {dir},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs, code := cli(t, append([]string{"ingest", "--store", store}, args...)...)
			if code != 1 || !strings.Contains(errs, "nothing ingested:") {
				t.Errorf("exit %d, stderr %q; want 1 saying why nothing was ingested", code, errs)
			}
		})
	}
	if _, errs, code := cli(t, "ingest", "--store", store); code != 2 || !strings.Contains(errs, "PATH") {
		t.Errorf("no PATH: exit %d %q", code, errs)
	}
}

func TestIngestBadFAQReportedOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"faq.jsonl":  `{"id":"1","question":"Q?","answer":"A."}` + "\n" + `{"id":"2","question":"no answer"}` + "\n",
		"ok/doc.md":  "# Doc\n\nFine.",
		"other.json": "{}",
	})
	out, errs, code := cli(t, "ingest", "--store", "embedded:"+filepath.Join(dir, "kb"), filepath.Join(dir, "ok"), "--faq", filepath.Join(dir, "faq.jsonl"))
	if code != 1 || strings.Count(out+errs, "without an answer") != 1 || !strings.Contains(errs, "line 2") {
		t.Errorf("exit %d; want the FAQ file's error once:\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "ingested 1 files") {
		t.Errorf("the good file was not ingested:\n%s", out)
	}
}

func TestIngestPruneAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	write(t, dir, map[string]string{"src/hr/a.md": "# A\n\nAlpha.", "src/hr/b.md": "# B\n\nBeta.", "secret/passwd.txt": "root:x:0:0"})
	if err := os.Symlink(filepath.Join(dir, "secret", "passwd.txt"), filepath.Join(src, "passwd.txt")); err != nil {
		t.Skip(err)
	}
	store := "embedded:" + filepath.Join(dir, "kb")
	out, errs, code := cli(t, "ingest", "--store", store, src)
	if code != 1 || !strings.Contains(errs, "passwd.txt") || !strings.Contains(errs, "--follow-symlinks") || !strings.Contains(out, "ingested 2 files") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	os.Remove(filepath.Join(src, "passwd.txt"))
	os.Remove(filepath.Join(src, "hr", "b.md"))
	out, errs, code = cli(t, "ingest", "--prune", "--store", store, src)
	if code != 0 || !strings.Contains(out, "pruned 1 document") || !strings.Contains(out, "hr/b.md") {
		t.Fatalf("prune: exit %d\n%s\n%s", code, out, errs)
	}
	k, err := kb.Open(context.Background(), store, kb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	docs, _, err := k.List(context.Background(), retrieval.Scope{})
	if err != nil || len(docs) != 1 || docs[0].Origin != "hr/a.md" {
		t.Errorf("documents after prune: %+v %v", docs, err)
	}
}

// TestIngestedSampleMatchesBuiltIn ingests the bundled sample folder into
// an embedded store: its FAQ collection must be the one kb.Sample builds
// in memory (same ids, texts, answers and vectors), so that the same FAQ
// questions get the same direct answers.
func TestIngestedSampleMatchesBuiltIn(t *testing.T) {
	dir := t.TempDir()
	store := "embedded:" + filepath.Join(dir, "kb")
	out, errs, code := cli(t, "ingest", "--store", store, filepath.Join("..", "..", "samplekb", "data"))
	entries, err := samplekb.FAQ()
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, " "+strconv.Itoa(len(entries))+" FAQ entries") {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}
	ctx := context.Background()
	emb, err := embed.FromConfig(embed.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	disk, err := kb.Open(ctx, store, kb.Options{Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := kb.Sample(ctx, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if disk.FAQ == nil || mem.FAQ == nil {
		t.Fatal("no FAQ collection")
	}
	defer disk.Close()
	// Every FAQ chunk, probed with each question's vector: equal ids,
	// texts, answers and cosine scores mean equal vectors.
	all := func(s retrieval.Searcher, vec []float32) map[string]retrieval.Hit {
		hits, err := s.SearchDense(ctx, retrieval.Request{Vector: vec, K: 1000})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]retrieval.Hit{}
		for _, h := range hits {
			out[h.Chunk.ID] = h
		}
		return out
	}
	for i, e := range entries {
		if i%7 != 0 && i != len(entries)-1 {
			continue // a sample of probes is enough
		}
		vecs, err := emb.Embed(ctx, []string{e.Question})
		if err != nil {
			t.Fatal(err)
		}
		a, b := all(mem.FAQ, vecs[0]), all(disk.FAQ, vecs[0])
		if len(a) != len(entries) || !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))) {
			t.Fatalf("FAQ ids differ: in memory %d, on disk %d", len(a), len(b))
		}
		for id, ha := range a {
			hb := b[id]
			if ha.Chunk.Text != hb.Chunk.Text || ha.Chunk.Meta[retrieval.MetaAnswer] != hb.Chunk.Meta[retrieval.MetaAnswer] ||
				ha.Chunk.Source != hb.Chunk.Source || ha.Score != hb.Score {
				t.Errorf("FAQ chunk %s differs:\n in memory %+v\n on disk   %+v", id, ha, hb)
			}
			if hb.Chunk.Meta[retrieval.MetaOrigin] != "faq.jsonl" || !strings.HasPrefix(hb.Chunk.Meta[retrieval.MetaLocator], "id faq-") {
				t.Errorf("FAQ chunk %s provenance %v", id, hb.Chunk.Meta)
			}
		}
	}
	disk.Close() // one process at a time in a store directory
	// And the pipeline answers alike.
	for _, q := range []string{entries[0].Question, entries[len(entries)-1].Question} {
		memOut, _, _ := cli(t, "ask", "--json", q)
		diskOut, _, _ := cli(t, "ask", "--json", "--store", store, q)
		if !strings.Contains(memOut, `"answered_by": "faq"`) || answerOf(memOut) != answerOf(diskOut) {
			t.Errorf("%s:\n built in: %s\n ingested: %s", q, answerOf(memOut), answerOf(diskOut))
		}
	}
}

// answerOf is the answer and citations of ask --json output.
func answerOf(out string) string {
	var r struct {
		Answer    string          `json:"answer"`
		Citations json.RawMessage `json:"citations"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return out
	}
	return r.Answer + " " + string(r.Citations)
}
