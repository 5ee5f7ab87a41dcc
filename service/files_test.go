package service

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesPerTenant serves a citation's file to its own tenant only:
// another tenant's key gets 404 for the same origin, paths and links
// cannot leave the folder, hidden and unsupported files are not served,
// HTML is sent as inert text, and a PDF as a PDF with ranges.
func TestFilesPerTenant(t *testing.T) {
	acme, globex, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(dir, name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(acme, "guides/fares.pdf", "%PDF-1.4 acme fares")
	write(acme, "notes.html", "<script>alert(1)</script>")
	write(acme, ".secret.md", "hidden")
	write(acme, "keys.env", "TOKEN=1")
	write(globex, "only-globex.pdf", "%PDF-1.4 globex")
	write(outside, "leak.pdf", "%PDF-1.4 outside")
	if err := os.Symlink(filepath.Join(outside, "leak.pdf"), filepath.Join(acme, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Keys: []Key{keyAcme, keyGlobex},
		Files: map[string]string{"acme": acme, "globex": globex}})
	get := func(key, path string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		resp := s.do(t, call{method: "GET", path: path, key: key, header: hdr})
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get(keyAcme.Key, "/v1/files/guides/fares.pdf", nil)
	if resp.StatusCode != 200 || body != "%PDF-1.4 acme fares" || resp.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("own PDF: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, body = get(keyAcme.Key, "/v1/files/guides/fares.pdf", map[string]string{"Range": "bytes=0-3"})
	if resp.StatusCode != http.StatusPartialContent || body != "%PDF" {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}
	for _, c := range []struct{ key, path string }{
		{keyGlobex.Key, "/v1/files/guides/fares.pdf"}, // acme's file, globex's key
		{keyAcme.Key, "/v1/files/only-globex.pdf"},    // globex's file, acme's key
		{keyAcme.Key, "/v1/files/../" + filepath.Base(globex) + "/only-globex.pdf"},
		{keyAcme.Key, "/v1/files/link.pdf"}, // a link out of the folder
		{keyAcme.Key, "/v1/files/.secret.md"},
		{keyAcme.Key, "/v1/files/keys.env"},
		{keyAcme.Key, "/v1/files/guides"},
	} {
		resp, body := get(c.key, c.path, nil)
		if resp.StatusCode == 200 || strings.Contains(body, "PDF-1.4") {
			t.Errorf("GET %s with %s's key: %d %q", c.path, c.key[:5], resp.StatusCode, body)
		}
	}
	resp, _ = get("", "/v1/files/guides/fares.pdf", nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d", resp.StatusCode)
	}
	resp, _ = get(keyAcme.Key, "/v1/files/notes.html", nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		resp.Header.Get("Content-Security-Policy") != "sandbox" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("HTML served as %d %q csp %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"))
	}
}

// TestFilesNone: without Config.Files nothing is served.
func TestFilesNone(t *testing.T) {
	s := newServer(t, Config{Pipeline: sampleParts(t).pipeline(t), Keys: []Key{keyAcme}})
	resp := s.do(t, call{method: "GET", path: "/v1/files/a.pdf", key: keyAcme.Key})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d", resp.StatusCode)
	}
}
