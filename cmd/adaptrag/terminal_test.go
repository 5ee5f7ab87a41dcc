package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// Escape sequences a document can carry to take over a terminal: retitle
// the window (OSC), clear the screen (CSI), the one-byte C1 CSI, and
// bidirectional overrides that reorder what is shown.
var terminalAttacks = []string{"\x1b]0;pwned\x07", "\x1b[2J", "\x1b[1A\x1b[K", "\u009b31m", "\u202e", "\u2066", "\u200f"}

// unsafeOutput reports the first character of s a terminal would act on.
func unsafeOutput(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r), r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u2028', r == '\u2029':
			return r, true
		}
	}
	return 0, false
}

// escapeKB ingests documents (and a file name) full of terminal escape
// sequences into a new knowledge base and returns its location.
func escapeKB(t *testing.T) (store string, name string) {
	t.Helper()
	dir := t.TempDir()
	body := "# Annual leave \x1b]0;pwned\x07policy\n\n" +
		"Employees get 15 days of annual leave each year.\x1b[2J The request goes to the team lead \u009b31m first. " +
		"Leave is approved within two working days \u202eyad eno\u202c unless \x1b[1A\x1b[K the team is short-staffed. " +
		strings.Repeat("Unused leave days carry over to the next year, up to five days \u2066in total\u2069. ", 12) + "\n"
	name = "leave \x1b[31mpolicy\u200f.md"
	if err := os.MkdirAll(filepath.Join(dir, "hr"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hr", name), []byte(body), 0o644); err != nil {
		t.Skipf("this file system refuses the name: %v", err)
	}
	store = "embedded:" + filepath.Join(t.TempDir(), "kb")
	out, errs, code := cli(t, "ingest", "--store", store, dir)
	if code != 0 {
		t.Fatalf("ingest: exit %d\n%s\n%s", code, out, errs)
	}
	if r, bad := unsafeOutput(out + errs); bad {
		t.Errorf("ingest printed %U to the terminal: %q", r, out+errs)
	}
	// Files that are skipped, fail, or are pruned are named on the
	// terminal too.
	for n, data := range map[string]string{"image \x1b]0;pwned\x07.png": "x", "binary \x1b[2J.txt": "\x00\x01", "gone \u202e.md": "# Gone\n\nSoon deleted.\n"} {
		if err := os.WriteFile(filepath.Join(dir, "hr", n), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, _ = cli(t, "ingest", "--store", store, dir)
	if !strings.Contains(errs, "image") || !strings.Contains(errs, "binary") {
		t.Fatalf("ingest does not name the skipped and failed files:\n%s", errs)
	}
	if r, bad := unsafeOutput(out + errs); bad {
		t.Errorf("ingest printed %U to the terminal: %q", r, out+errs)
	}
	os.Remove(filepath.Join(dir, "hr", "gone \u202e.md"))
	os.Remove(filepath.Join(dir, "hr", "binary \x1b[2J.txt"))
	out, errs, _ = cli(t, "ingest", "--prune", "--store", store, dir)
	if !strings.Contains(out, "pruned 1 document") {
		t.Fatalf("ingest --prune does not name the pruned file:\n%s", out)
	}
	if r, bad := unsafeOutput(out + errs); bad {
		t.Errorf("ingest --prune printed %U to the terminal: %q", r, out+errs)
	}
	return store, name
}

// Terminal escape sequences in documents, their titles and their file
// names never reach the human output of ask and ls (they are shown as
// U+FFFD), while ask --json keeps the text exact, escaped by JSON.
func TestTerminalEscapesNeverReachTheTerminal(t *testing.T) {
	store, name := escapeKB(t)
	q := "How many days of annual leave do employees get?"
	out, errs, code := cli(t, "ask", "--store", store, q)
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "15 days") || !strings.Contains(out, "\ufffd") {
		t.Fatalf("the escaping document is not in the answer; the test proves nothing:\n%s", out)
	}
	if r, bad := unsafeOutput(out + errs); bad {
		t.Errorf("ask printed %U to the terminal:\n%q", r, out)
	}
	out, errs, code = cli(t, "ls", "--store", store)
	if code != 0 {
		t.Fatalf("ls: exit %d: %s", code, errs)
	}
	if r, bad := unsafeOutput(out + errs); bad {
		t.Errorf("ls printed %U to the terminal:\n%q", r, out)
	}

	// --json: the exact text, every terminal control escaped.
	out, errs, code = cli(t, "ask", "--json", "--store", store, q)
	if code != 0 {
		t.Fatalf("ask --json: exit %d: %s", code, errs)
	}
	if r, bad := unsafeOutput(out); bad {
		t.Errorf("ask --json printed %U unescaped", r)
	}
	var res struct {
		Docs []struct {
			Text, Title, Origin string
		} `json:"passages"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var all string
	for _, d := range res.Docs {
		all += d.Text + d.Title + d.Origin
	}
	for _, a := range terminalAttacks {
		if !strings.Contains(all, a) {
			t.Errorf("ask --json lost %q from the text", a)
		}
	}
	if !strings.Contains(all, "hr/"+name) {
		t.Errorf("ask --json lost the file name %q", name)
	}
	out, _, _ = cli(t, "ls", "--json", "--store", store)
	if r, bad := unsafeOutput(out); bad {
		t.Errorf("ls --json printed %U unescaped", r)
	}
	if !strings.Contains(out, `\u001b[31mpolicy\u200f.md`) {
		t.Errorf("ls --json does not keep the file name exact:\n%s", out)
	}
}
