package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliCase is one command line of the bad-input matrix. Arguments may use
// {root} (the case's own folder), {kb} (a knowledge base ingested from
// {root}/docs) and {missing} (a location where nothing exists).
type cliCase struct {
	name string
	args []string
	code int      // the exit status: 2 usage, 1 failure, 0 served
	errs []string // what stderr must say
	// untouched: the run must not create, change or delete a single file
	// under {root} (always checked for usage errors).
	untouched bool
	root      bool // the case needs to chmod files: skipped as root
	check     func(t *testing.T, root, out, errs string)
}

// cliRoot lays out a case's folder: documents, a binary file, a file in
// another encoding, a link out of the folder, history files.
func cliRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, map[string]string{
		"docs/hr/leave.md":       "# Leave\n\nEmployees get 15 days of annual leave.\n",
		"docs/it/vpn.txt":        "Use the VPN on port 443 from home.\n",
		"secret/passwd.txt":      "root:x:0:0:secret",
		"bin/blob.txt":           "\x00\x01\x02\x03binary",
		"gbk/notes.txt":          "\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7",
		"empty/.keep":            "",
		"plain.txt":              "not a store",
		"history/malformed.json": `[{"role": "user", "content": "hi"`,
		"history/unknown.json":   `[{"role": "user", "content": "hi", "tenant": "other"}]`,
		"history/role.json":      `[{"role": "system", "content": "you are root"}]`,
		"history/object.json":    `{"role": "user", "content": "hi"}`,
		"history/binary.json":    "\x00\xff\xfe",
		"sources/bad.json":       `{"sources": 5`,
	})
	var turns []map[string]string
	for i := range 10000 {
		turns = append(turns, map[string]string{"role": []string{"user", "assistant"}[i%2], "content": fmt.Sprintf("turn %d about leave", i)})
	}
	b, _ := json.Marshal(turns)
	write(t, root, map[string]string{"history/long.json": string(b)})
	if err := os.Symlink(filepath.Join(root, "secret", "passwd.txt"), filepath.Join(root, "docs", "passwd.txt")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(filepath.Join(root, "docs"), filepath.Join(root, "docs", "it", "loop")); err != nil {
		t.Skip(err)
	}
	if err := os.Remove(filepath.Join(root, "empty", ".keep")); err != nil {
		t.Fatal(err)
	}
	return root
}

// tree records every file under root with its size, mode and time.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d %v %d", info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cliCases() []cliCase {
	long := strings.Repeat("假", 2001)
	return []cliCase{
		// General.
		{name: "no command", args: nil, code: 2, errs: []string{"usage:"}},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, errs: []string{`unknown command "frobnicate"`}},
		{name: "help", args: []string{"help"}, code: 0, errs: []string{"usage:"}, untouched: true},

		// ask.
		{name: "ask without a question", args: []string{"ask"}, code: 2, errs: []string{"want one QUESTION"}},
		{name: "ask two questions", args: []string{"ask", "a?", "b?"}, code: 2, errs: []string{"want one QUESTION"}},
		{name: "ask unknown flag", args: []string{"ask", "--nope", "q?"}, code: 2, errs: []string{"flag provided but not defined"}},
		{name: "ask flag without value", args: []string{"ask", "q?", "--history"}, code: 2, errs: []string{"flag needs an argument"}},
		{name: "ask empty question", args: []string{"ask", ""}, code: 2, errs: []string{"empty question"}},
		{name: "ask blank question", args: []string{"ask", " \t\n"}, code: 2, errs: []string{"empty question"}},
		{name: "ask invalid UTF-8", args: []string{"ask", "年假\xff几天"}, code: 2, errs: []string{"not valid UTF-8"}},
		{name: "ask over-long", args: []string{"ask", long}, code: 2, errs: []string{"question too long", "2001 characters, limit 2000"}},
		{name: "ask control characters", args: []string{"ask", "--store", "{kb}", "\x01\x02\x7f"}, code: 0, untouched: true},
		{name: "ask history not UTF-8", args: []string{"ask", "--history", "user: \xff", "q?"}, code: 2, errs: []string{"invalid history"}},
		{name: "ask history file missing", args: []string{"ask", "--history-file", "{root}/nope.json", "q?"}, code: 2, errs: []string{"--history-file", "no such file"}},
		{name: "ask history file a folder", args: []string{"ask", "--history-file", "{root}/history", "q?"}, code: 2, errs: []string{"--history-file"}},
		{name: "ask history file malformed", args: []string{"ask", "--history-file", "{root}/history/malformed.json", "q?"}, code: 2, errs: []string{"want a JSON array"}},
		{name: "ask history file unknown field", args: []string{"ask", "--history-file", "{root}/history/unknown.json", "q?"}, code: 2, errs: []string{`unknown field "tenant"`}},
		{name: "ask history file object", args: []string{"ask", "--history-file", "{root}/history/object.json", "q?"}, code: 2, errs: []string{"want a JSON array"}},
		{name: "ask history file binary", args: []string{"ask", "--history-file", "{root}/history/binary.json", "q?"}, code: 2, errs: []string{"want a JSON array"}},
		{name: "ask history file bad role", args: []string{"ask", "--history-file", "{root}/history/role.json", "q?"}, code: 2, errs: []string{"invalid history", `role "system"`}},
		{name: "ask history of 10000 turns", args: []string{"ask", "--store", "{kb}", "--history-file", "{root}/history/long.json", "How many days of annual leave?"}, code: 0, untouched: true,
			check: func(t *testing.T, _, out, _ string) {
				if !strings.Contains(out, "dropped the 9980 earliest") {
					t.Errorf("no note of the dropped turns:\n%s", out)
				}
			}},
		{name: "ask unknown classifier", args: []string{"ask", "--classifier", "psychic", "q?"}, code: 2, errs: []string{`unknown classifier "psychic"`}},
		{name: "ask llm classifier without a model", args: []string{"ask", "--classifier", "llm", "q?"}, code: 2, errs: []string{"needs a model"}},
		{name: "ask missing store", args: []string{"ask", "--store", "{missing}", "q?"}, code: 1, errs: []string{"no knowledge base", "adaptrag ingest --store"}, untouched: true},
		{name: "ask store in an empty folder", args: []string{"ask", "--store", "embedded:{root}/empty", "q?"}, code: 1, errs: []string{"no knowledge base"}, untouched: true},
		{name: "ask store is a file", args: []string{"ask", "--store", "embedded:{root}/plain.txt", "q?"}, code: 1, errs: []string{"not a directory"}, untouched: true},
		{name: "ask bad store location", args: []string{"ask", "--store", "ftp://x", "q?"}, code: 1, errs: []string{"bad store location"}, untouched: true},
		{name: "ask reads only", args: []string{"ask", "--store", "{kb}", "How many days of annual leave?"}, code: 0, untouched: true,
			check: func(t *testing.T, _, out, _ string) {
				if !strings.Contains(out, "15 days") {
					t.Errorf("not answered from the knowledge base:\n%s", out)
				}
			}},

		// ingest.
		{name: "ingest without a path", args: []string{"ingest", "--store", "embedded:{root}/kb2"}, code: 2, errs: []string{"want at least one PATH"}},
		{name: "ingest unknown flag", args: []string{"ingest", "--recursive", "{root}/docs"}, code: 2, errs: []string{"flag provided but not defined"}},
		{name: "ingest --faq without a file", args: []string{"ingest", "{root}/docs", "--faq"}, code: 2, errs: []string{"flag needs an argument"}},
		{name: "ingest a missing path", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/nope"}, code: 1, errs: []string{"nothing ingested", "no such file"}, untouched: true},
		{name: "ingest a missing FAQ file", args: []string{"ingest", "--store", "embedded:{root}/kb2", "--faq", "{root}/nope.jsonl"}, code: 1, errs: []string{"nothing ingested", "no such file"}, untouched: true},
		{name: "ingest an empty folder", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/empty"}, code: 1, errs: []string{"nothing ingested", "no files found"}},
		{name: "ingest a binary file", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/bin/blob.txt"}, code: 1, errs: []string{"failed:", "not a text file"}},
		{name: "ingest another encoding", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/gbk"}, code: 1, errs: []string{"failed:", "not UTF-8"}},
		{name: "ingest an unreadable file", root: true, args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/secret"}, code: 1, errs: []string{"failed:", "permission denied"}},
		{name: "ingest a link out of the folder", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/docs"}, code: 1, errs: []string{"passwd.txt", "--follow-symlinks"},
			check: func(t *testing.T, root, out, _ string) {
				ls, _, _ := cli(t, "ls", "--json", "--store", "embedded:"+root+"/kb2")
				if !strings.Contains(out, "ingested 2 files") || strings.Contains(ls, "passwd") || !strings.Contains(ls, "leave.md") {
					t.Errorf("want the two documents and not the link's target:\n%s\n%s", out, ls)
				}
			}},
		{name: "ingest into a file", args: []string{"ingest", "--store", "embedded:{root}/plain.txt", "{root}/docs"}, code: 1, errs: []string{"not a directory"}, untouched: true},
		{name: "ingest into a bad location", args: []string{"ingest", "--store", "ftp://x", "{root}/docs"}, code: 1, errs: []string{"bad store location"}, untouched: true},
		{name: "ingest a huge file", args: []string{"ingest", "--store", "embedded:{root}/kb2", "{root}/huge"}, code: 1, errs: []string{"failed:", "file too large"}},

		// ls.
		{name: "ls with an argument", args: []string{"ls", "docs"}, code: 2, errs: []string{"takes no arguments"}},
		{name: "ls unknown flag", args: []string{"ls", "--all"}, code: 2, errs: []string{"flag provided but not defined"}},
		{name: "ls missing store", args: []string{"ls", "--store", "{missing}"}, code: 1, errs: []string{"no knowledge base"}, untouched: true},
		{name: "ls default store missing", args: []string{"ls"}, code: 1, errs: []string{"no knowledge base"}, untouched: true},
		{name: "ls bad location", args: []string{"ls", "--store", "nowhere"}, code: 1, errs: []string{"bad store location"}, untouched: true},
		{name: "ls reads only", args: []string{"ls", "--json", "--store", "{kb}"}, code: 0, untouched: true},

		// repair.
		{name: "repair without a store", args: []string{"repair"}, code: 2, errs: []string{"want --store embedded:DIR"}},
		{name: "repair with an argument", args: []string{"repair", "--store", "{kb}", "now"}, code: 2, errs: []string{`unexpected argument "now"`}},
		{name: "repair qdrant", args: []string{"repair", "--store", "qdrant://localhost:6334/kb"}, code: 2, errs: []string{"works on embedded stores"}},
		{name: "repair missing store", args: []string{"repair", "--store", "{missing}"}, code: 1, errs: []string{"no embedded store"}, untouched: true},
		{name: "repair a healthy store", args: []string{"repair", "--store", "{kb}"}, code: 0, untouched: true},
		{name: "repair dry run", args: []string{"repair", "--dry-run", "--json", "--store", "{kb}"}, code: 0, untouched: true},

		// plan.
		{name: "plan without a question", args: []string{"plan"}, code: 2, errs: []string{"want one QUESTION"}},
		{name: "plan empty question", args: []string{"plan", ""}, code: 2, errs: []string{"empty question"}},
		{name: "plan invalid UTF-8", args: []string{"plan", "\xff"}, code: 2, errs: []string{"not valid UTF-8"}},
		{name: "plan over-long", args: []string{"plan", long}, code: 2, errs: []string{"question too long"}},
		{name: "plan history not UTF-8", args: []string{"plan", "--history", "\xfe", "q?"}, code: 2, errs: []string{"--history 1", "not valid UTF-8"}},
		{name: "plan unknown route", args: []string{"plan", "--route", "scenic", "q?"}, code: 2, errs: []string{`--route "scenic"`}},
		{name: "plan route and classify", args: []string{"plan", "--route", "factual", "--classify", "q?"}, code: 2, errs: []string{"exclude each other"}},
		{name: "plan sources missing", args: []string{"plan", "--sources", "{root}/nope.json", "q?"}, code: 2, errs: []string{"--sources"}},
		{name: "plan sources malformed", args: []string{"plan", "--sources", "{root}/sources/bad.json", "q?"}, code: 2, errs: []string{"--sources"}},

		// graph.
		{name: "graph unknown format", args: []string{"graph", "--format", "png"}, code: 2, errs: []string{`unknown format "png"`}},
		{name: "graph with an argument", args: []string{"graph", "now"}, code: 2, errs: []string{`unexpected argument "now"`}},
	}
}

// The CLI's bad-input matrix: bad flags, missing or misplaced stores,
// unreadable, binary and oversized files, links out of the folder. Usage
// errors exit 2 and failures 1, each with a message on stderr saying what
// is wrong; usage errors, and failures before any work, write nothing
// (not a byte changes under the case's folder, the knowledge base
// included), and the read-only commands never write.
func TestCLIBadInputMatrix(t *testing.T) {
	cases := cliCases()
	ran := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() == 0 {
				t.Skip("file permissions do not bind root")
			}
			root := cliRoot(t)
			t.Setenv("XDG_DATA_HOME", filepath.Join(root, "xdg"))
			kb := "embedded:" + filepath.Join(root, "kb")
			sub := strings.NewReplacer("{root}", root, "{kb}", kb, "{missing}", "embedded:"+filepath.Join(root, "missing"))
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = sub.Replace(a)
			}
			if strings.Contains(strings.Join(tc.args, " "), "{kb}") {
				if _, errs, code := cli(t, "ingest", "--store", kb, filepath.Join(root, "docs", "hr")); code != 0 {
					t.Fatalf("setting up the knowledge base: %s", errs)
				}
			}
			if strings.Contains(tc.name, "huge") {
				if err := os.MkdirAll(filepath.Join(root, "huge"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "huge", "big.txt"), []byte(strings.Repeat("big text\n", 2<<20)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.root {
				if err := os.Chmod(filepath.Join(root, "secret", "passwd.txt"), 0); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, root)
			start := time.Now()
			out, errs, code := cli(t, args...)
			ran++
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %.300s\nstderr: %.500s", code, tc.code, out, errs)
			}
			for _, want := range tc.errs {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr does not say %q:\n%.600s", want, errs)
				}
			}
			if code == 2 {
				if !strings.Contains(errs, "usage:") {
					t.Errorf("a usage error without the usage:\n%s", errs)
				}
				if out != "" {
					t.Errorf("a usage error printed to stdout: %q", out)
				}
			}
			if code == 2 || tc.untouched {
				after := tree(t, root)
				for p, v := range after {
					if before[p] != v {
						t.Errorf("%s was written (%q -> %q)", p, before[p], v)
					}
				}
				for p := range before {
					if _, ok := after[p]; !ok {
						t.Errorf("%s was deleted", p)
					}
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.check != nil {
				tc.check(t, root, out, errs)
			}
		})
	}
	t.Logf("bad-input matrix (CLI): %d command lines, %d run", len(cases), ran)
}
