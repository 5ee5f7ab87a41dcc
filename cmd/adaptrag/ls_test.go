package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"src/hr/leave.md":   "# Leave\n\nFive days.\n\n## Sick\n\nBring a note.",
		"src/it/vpn.txt":    "Use port 443.",
		"src/faq.jsonl":     `{"id":"1","question":"Q1?","answer":"A1."}` + "\n" + `{"id":"2","question":"Q2?","answer":"A2."}`,
		"other/finance.csv": "type,approver\ntravel,manager\n",
	})
	store := "embedded:" + filepath.Join(dir, "kb")
	if out, errs, code := cli(t, "ingest", "--store", store, filepath.Join(dir, "src")); code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code := cli(t, "ingest", "--tenant", "acme", "--store", store, filepath.Join(dir, "other")); code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}

	out, errs, code := cli(t, "ls", "--store", store)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{"CHUNKS", "ORIGIN", "hr/leave.md", "it/vpn.txt", "sha256:", "2 documents, 3 chunks; 2 FAQ entries from faq.jsonl"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "finance.csv") {
		t.Errorf("another tenant's document listed:\n%s", out)
	}

	out, errs, code = cli(t, "ls", "--json", "--tenant", "acme", "--store", store)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Documents []struct {
			Origin      string    `json:"origin"`
			DocID       string    `json:"doc_id"`
			Chunks      int       `json:"chunks"`
			ContentHash string    `json:"content_hash"`
			IngestedAt  time.Time `json:"ingested_at"`
		} `json:"documents"`
		FAQEntries *int `json:"faq_entries"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Documents) != 1 || got.FAQEntries == nil || *got.FAQEntries != 0 {
		t.Fatalf("ls --json = %s", out)
	}
	d := got.Documents[0]
	if d.Origin != "finance.csv" || d.Chunks != 1 || len(d.ContentHash) != len("sha256:")+64 ||
		time.Since(d.IngestedAt) > time.Hour || !strings.HasSuffix(d.DocID, "/other/finance.csv") {
		t.Errorf("document %+v", d)
	}
}

func TestLsMissingStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo")
	_, errs, code := cli(t, "ls", "--store", "embedded:"+missing)
	if code != 1 || !strings.Contains(errs, missing) || !strings.Contains(errs, "adaptrag ingest") {
		t.Errorf("exit %d, stderr %q; want 1 naming the path and the remedy", code, errs)
	}
	if _, errs, code := cli(t, "ls", "extra"); code != 2 {
		t.Errorf("ls with an argument: exit %d %q", code, errs)
	}
	// Asking a missing store fails the same way and creates nothing.
	_, errs, code = cli(t, "ask", "--store", "embedded:"+missing, "hello?")
	if code != 1 || !strings.Contains(errs, "no knowledge base at "+missing) {
		t.Errorf("ask: exit %d, %q", code, errs)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "*")); len(entries) != 0 {
		t.Errorf("opening for reading created %v", entries)
	}
}
