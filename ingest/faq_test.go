package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
)

func TestParseFAQ(t *testing.T) {
	tests := []struct {
		name, data string
		want       []ingest.FAQEntry
		err        string // substring of the error; "" for none
	}{
		{"f.jsonl", `{"id":"a","question":"Q?","answer":"A.","source":"hr","lang":"en","extra":1}`,
			[]ingest.FAQEntry{{ID: "a", Question: "Q?", Answer: "A.", Source: "hr", Lang: "en", Locator: "id a"}}, ""},
		{"aliases.jsonl", "\n" + `{"Q":"Q?","a":"A."}` + "\n" + `{"问题":"问？","答案":"答。","分类":"hr"}`,
			[]ingest.FAQEntry{{Question: "Q?", Answer: "A.", Locator: "line 2"}, {Question: "问？", Answer: "答。", Source: "hr", Locator: "line 3"}}, ""},
		{"exact wins.jsonl", `{"q":"alias","question":"exact","answer":"A"}`,
			[]ingest.FAQEntry{{Question: "exact", Answer: "A", Locator: "line 1"}}, ""},
		{"f.csv", "编号,问题,答案\n1,问？,\"答，\n两行\"\n\n,无编号？,有答案\n",
			[]ingest.FAQEntry{{ID: "1", Question: "问？", Answer: "答，\n两行", Locator: "id 1"}, {Question: "无编号？", Answer: "有答案", Locator: "row 4"}}, ""},
		{"empty.jsonl", "", nil, ""},
		{"bad.jsonl", `{"question":"Q","answer":"A"}` + "\n{oops", nil, "line 2"},
		{"noanswer.jsonl", `{"question":"Q"}`, nil, "line 1: FAQ entry without an answer"},
		{"dup.jsonl", `{"id":"x","q":"1","a":"1"}` + "\n" + `{"id":"x","q":"2","a":"2"}`, nil, `line 2: FAQ id "x" already used on line 1`},
		{"nocol.csv", "question,reply\nq,a\n", nil, "no answer column"},
		{"noq.csv", "question,answer\n,a\n", nil, "row 2: FAQ entry without a question"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ingest.ParseFAQ(tt.name, []byte(tt.data))
			if tt.err != "" {
				if !errors.Is(err, ingest.ErrMalformed) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrMalformed naming %q", err, tt.err)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %+v, err %v; want %+v", got, err, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	if _, err := ingest.ParseFAQ("f.md", []byte("x")); !errors.Is(err, ingest.ErrUnsupported) {
		t.Errorf("markdown FAQ: err = %v, want ErrUnsupported", err)
	}
	if _, err := ingest.ParseFAQ("f.csv", []byte("q,a\x00\n")); !errors.Is(err, ingest.ErrBinary) {
		t.Errorf("binary FAQ: err = %v, want ErrBinary", err)
	}
}

// TestFAQFilesAreRecognisedByContent ingests a folder with FAQ and
// non-FAQ JSON-lines and CSV files: the FAQ ones go to the FAQ collection
// only.
func TestFAQFilesAreRecognisedByContent(t *testing.T) {
	m := fstest.MapFS{
		"hr/faq.jsonl":       {Data: []byte(`{"id":"l1","question":"How many leave days?","answer":"Five.","lang":"en"}`)},
		"hr/notes.jsonl":     {Data: []byte(`{"id":"n1","text":"Badges at reception.","question":"not an FAQ: it has text"}`)},
		"finance/qa.csv":     {Data: []byte("Q,A,category\nWho approves?,The director.,approvals\n")},
		"finance/table.csv":  {Data: []byte("type,approver\ntravel,manager\n")},
		"finance/forced.csv": {Data: []byte("ask,reply\nx,y\n")},
	}
	docs, faq := newMemStore(4), newMemStore(4)
	o := ingest.Options{Embedder: &hashEmbedder{dim: 4}}
	rep, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: docs, FAQ: faq}, m, o)
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	if rep.Files != 3 || rep.Chunks != 3 || rep.FAQFiles != 2 || rep.FAQEntries != 2 {
		t.Errorf("report %+v", rep)
	}
	for _, c := range docs.all() {
		if c.ContentType == retrieval.ContentFAQ {
			t.Errorf("FAQ chunk among documents: %+v", c)
		}
	}
	bySource := map[string]retrieval.Chunk{}
	for _, c := range faq.all() {
		bySource[c.Source] = c
	}
	hr, fin := bySource["hr"], bySource["approvals"]
	if hr.Text != "How many leave days?" || hr.Meta[retrieval.MetaAnswer] != "Five." || hr.Meta[retrieval.MetaLocator] != "id l1" || hr.Meta[retrieval.MetaOrigin] != "hr/faq.jsonl" {
		t.Errorf("hr FAQ chunk %+v", hr)
	}
	if fin.Text != "Who approves?" || fin.Meta[retrieval.MetaLocator] != "row 2" || fin.Meta[retrieval.MetaOrigin] != "finance/qa.csv" {
		t.Errorf("finance FAQ chunk %+v", fin)
	}

	// Without an FAQ store, FAQ files fail and documents still go in.
	rep, _ = ingest.IngestFS(context.Background(), ingest.Target{Docs: newMemStore(4)}, m, o)
	if rep.Files != 3 || len(rep.Errors) != 2 || !errors.Is(rep.Err(), ingest.ErrNoFAQStore) {
		t.Errorf("no FAQ store: %+v", rep)
	}

	// Named explicitly, a file must be an FAQ.
	rep, _ = ingest.IngestFS(context.Background(), ingest.Target{Docs: docs, FAQ: faq}, m,
		ingest.Options{Embedder: o.Embedder, FAQFiles: []string{"finance/forced.csv"}})
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), "no question column") {
		t.Errorf("forced FAQ without question column: %v", rep.Errors)
	}
}

func TestFAQFileFlagOnDisk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kb/pets.md": "Dogs on Fridays.", "qa.jsonl": `{"prompt":"Cats?","response":"No.","question":"Cats?","answer":"No."}`,
		"kb/faq.jsonl": `{"text":"looks like a document","question":"q","answer":"a"}`})
	docs, faq := newMemStore(0), newMemStore(0)
	rep, err := ingest.Ingest(context.Background(), ingest.Target{Docs: docs, FAQ: faq}, []string{filepath.Join(dir, "kb")},
		ingest.Options{FAQFiles: []string{filepath.Join(dir, "qa.jsonl"), filepath.Join(dir, "kb", "faq.jsonl")}})
	if err != nil || rep.Err() != nil {
		t.Fatal(err, rep.Err())
	}
	if rep.Files != 1 || rep.FAQFiles != 2 || len(faq.all()) != 2 {
		t.Errorf("report %+v, %d FAQ chunks", rep, len(faq.all()))
	}
}

func TestFileChangingKindMovesCollections(t *testing.T) {
	m := fstest.MapFS{"x.jsonl": {Data: []byte(`{"question":"Q","answer":"A"}`)}}
	docs, faq := newMemStore(0), newMemStore(0)
	tgt := ingest.Target{Docs: docs, FAQ: faq}
	ingest.IngestFS(context.Background(), tgt, m, ingest.Options{})
	m["x.jsonl"].Data = []byte(`{"text":"now a document"}`)
	ingest.IngestFS(context.Background(), tgt, m, ingest.Options{})
	if len(faq.all()) != 0 || len(docs.all()) != 1 {
		t.Errorf("%d FAQ chunks, %d doc chunks: want the file's FAQ entries gone", len(faq.all()), len(docs.all()))
	}
}

func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hr/guide.md":      "# Guide\n\n## Leave\n\nFive days.\n",
		"hr/rooms.csv":     "room,floor\nA,1\nB,2\n",
		"hr/notes.jsonl":   `{"id":"n1","text":"with id"}` + "\n" + `{"text":"without id"}`,
		"hr/plain.txt":     "Plain text.",
		"hr/page.html":     "<title>Page</title><h2>Part</h2><p>Body.</p>",
		"hr/faq/faq.jsonl": `{"id":"f1","question":"Q?","answer":"A."}`,
	})
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.FixedZone("CST", 8*3600))
	docs, faq := newMemStore(0), newMemStore(0)
	o := ingest.Options{Now: func() time.Time { return at }}
	if _, err := ingest.Ingest(context.Background(), ingest.Target{Docs: docs, FAQ: faq}, []string{dir}, o); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "hr", "rooms.csv"))
	doc, _ := ingest.Parse("rooms.csv", raw, ingest.Options{})
	got := map[string]bool{}
	for _, c := range append(docs.all(), faq.all()...) {
		m := c.Meta
		got[m[retrieval.MetaOrigin]+" | "+m[retrieval.MetaLocator]] = true
		if m[retrieval.MetaIngestedAt] != "2026-03-01T01:30:00Z" || !strings.HasPrefix(m[retrieval.MetaContentHash], "sha256:") || m["path"] != "" {
			t.Errorf("%s: meta %v", c.Text, m)
		}
		if m[retrieval.MetaOrigin] == "hr/rooms.csv" && m[retrieval.MetaContentHash] != doc.Hash {
			t.Errorf("hash %s, want the file's %s", m[retrieval.MetaContentHash], doc.Hash)
		}
	}
	for _, want := range []string{
		"hr/guide.md | Guide > Leave", "hr/rooms.csv | row 2", "hr/rooms.csv | row 3",
		"hr/notes.jsonl | id n1", "hr/notes.jsonl | line 2", "hr/plain.txt | ",
		"hr/page.html | Page > Part", "hr/faq/faq.jsonl | id f1",
	} {
		if !got[want] {
			t.Errorf("no chunk at %q; have %v", want, got)
		}
	}
}
